import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core values as the API's D-Bus values.
enum Encode {
    /// The `Call` object's properties, by name.
    static func properties(of call: Call, callerName: String? = nil) -> [String: DBusValue] {
        typealias API = Telephony1.Call
        var properties: [String: DBusValue] = [:]
        func set<T: DBusRepresentable>(_ spec: PropertySpec<T>, _ value: T) { properties[spec.name] = value.dbusValue }
        set(API.uuid, call.uuid.apiString)
        set(API.provider, Telephony1.providerPath(call.provider.rawValue))
        set(API.providerName, call.providerName)
        set(API.handle, call.handle.value)
        set(API.handleType, call.handle.type.rawValue)
        set(API.callerName, callerName ?? call.callerName)
        set(API.outgoing, call.outgoing)
        set(API.state, call.state.rawValue)
        set(API.onHold, call.onHold)
        set(API.muted, call.muted)
        set(API.hasConnected, call.hasConnected)
        set(API.hasEnded, call.hasEnded)
        set(API.hasVideo, call.hasVideo)
        set(API.group, call.group?.apiString ?? "")
        set(API.supportsHolding, call.supportsHolding)
        set(API.supportsGrouping, call.supportsGrouping)
        set(API.supportsUngrouping, call.supportsUngrouping)
        set(API.supportsDTMF, call.supportsDTMF)
        set(API.startedAt, call.startedAt)
        set(API.connectedAt, call.connectedAt)
        set(API.endedAt, call.endedAt)
        return properties
    }

    /// The configuration with every default filled in.
    static func configuration(_ configuration: ProviderConfiguration) -> [String: DBusValue] {
        [
            "Name": .string(configuration.name),
            "MaximumCallGroups": .uint32(UInt32(clamping: configuration.maximumCallGroups)),
            "MaximumCallsPerCallGroup": .uint32(UInt32(clamping: configuration.maximumCallsPerCallGroup)),
            "SupportsVideo": .bool(configuration.supportsVideo),
            "SupportedHandleTypes": configuration.supportedHandleTypes.map(\.rawValue).sorted().dbusValue,
            "IncludesCallsInRecents": .bool(configuration.includesCallsInRecents),
            "RingtoneSound": .string(configuration.ringtoneSound),
            "IconName": .string(configuration.iconName),
            "IconData": configuration.iconData.dbusValue,
            "URLSchemes": configuration.urlSchemes.dbusValue,
            "DesktopEntry": .string(configuration.desktopEntry),
        ]
    }

    /// `PerformAction`'s `args`: the action's keys as in `RequestTransaction`, plus `TransactionUUID`.
    static func arguments(of action: Action) -> [String: DBusValue] {
        var args: [String: DBusValue] = [
            "CallUUID": .string(action.callUUID.apiString),
            "TransactionUUID": .string(action.transactionID.apiString),
        ]
        switch action.kind {
        case .start(let handle, let video, let contactIdentifier):
            args["Handle"] = .string(handle.value)
            args["HandleType"] = .string(handle.type.rawValue)
            args["Video"] = .bool(video)
            args["ContactIdentifier"] = .string(contactIdentifier)
        case .answer, .end: break
        case .setHeld(let onHold): args["OnHold"] = .bool(onHold)
        case .setMuted(let muted): args["Muted"] = .bool(muted)
        case .setGroup(let other): args["GroupWith"] = .string(other?.apiString ?? "")
        case .playDTMF(let digits, let type):
            args["Digits"] = .string(digits)
            args["Type"] = .string(type.rawValue)
        }
        return args
    }
}
