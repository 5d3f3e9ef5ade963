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
            Telephony1.Key.name: .string(configuration.name),
            Telephony1.Key.maximumCallGroups: .uint32(UInt32(clamping: configuration.maximumCallGroups)),
            Telephony1.Key.maximumCallsPerCallGroup: .uint32(UInt32(clamping: configuration.maximumCallsPerCallGroup)),
            Telephony1.Key.supportsVideo: .bool(configuration.supportsVideo),
            Telephony1.Key.supportedHandleTypes: configuration.supportedHandleTypes.map(\.rawValue).sorted().dbusValue,
            Telephony1.Key.includesCallsInRecents: .bool(configuration.includesCallsInRecents),
            Telephony1.Key.ringtoneSound: .string(configuration.ringtoneSound),
            Telephony1.Key.iconName: .string(configuration.iconName),
            Telephony1.Key.iconData: configuration.iconData.dbusValue,
            Telephony1.Key.urlSchemes: configuration.urlSchemes.dbusValue,
            Telephony1.Key.desktopEntry: .string(configuration.desktopEntry),
        ]
    }

    /// `PerformAction`'s `args`: the action's keys as in `RequestTransaction`, plus `TransactionUUID`.
    static func arguments(of action: Action) -> [String: DBusValue] {
        var args: [String: DBusValue] = [
            Telephony1.Key.callUUID: .string(action.callUUID.apiString),
            Telephony1.Key.transactionUUID: .string(action.transactionID.apiString),
        ]
        switch action.kind {
        case .start(let handle, let video, let contactIdentifier):
            args[Telephony1.Key.handle] = .string(handle.value)
            args[Telephony1.Key.handleType] = .string(handle.type.rawValue)
            args[Telephony1.Key.video] = .bool(video)
            args[Telephony1.Key.contactIdentifier] = .string(contactIdentifier)
        case .answer, .end: break
        case .setHeld(let onHold): args[Telephony1.Key.onHold] = .bool(onHold)
        case .setMuted(let muted): args[Telephony1.Key.muted] = .bool(muted)
        case .setGroup(let other): args[Telephony1.Key.groupWith] = .string(other?.apiString ?? "")
        case .playDTMF(let digits, let type):
            args[Telephony1.Key.digits] = .string(digits)
            args[Telephony1.Key.type] = .string(type.rawValue)
        }
        return args
    }
}
