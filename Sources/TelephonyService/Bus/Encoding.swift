import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core values as the API's D-Bus values.
enum Encode {
    /// The `Call` object's properties, by name.
    static func properties(of call: Call, callerName: String? = nil) -> [String: DBusValue] {
        typealias API = Telephony1.Call
        var properties: [String: DBusValue] = [:]
        // Its 22 properties: room for them at once, not grown (and rehashed) four times.
        properties.reserveCapacity(22)
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
        set(API.silenced, call.silenced)
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
        var record = Telephony1.ProviderConfiguration()
        record.name = configuration.name
        record.maximumCallGroups = UInt32(clamping: configuration.maximumCallGroups)
        record.maximumCallsPerCallGroup = UInt32(clamping: configuration.maximumCallsPerCallGroup)
        record.supportsVideo = configuration.supportsVideo
        record.supportedHandleTypes = configuration.supportedHandleTypes.map(\.rawValue).sorted()
        record.includesCallsInRecents = configuration.includesCallsInRecents
        record.ringtoneSound = configuration.ringtoneSound
        record.iconName = configuration.iconName
        // Not here: the IconData property, read on demand (never copied into every signal).
        record.urlSchemes = configuration.urlSchemes
        record.desktopEntry = configuration.desktopEntry
        return record.entries
    }

    /// `PerformAction`'s `args`: the action's keys as in `RequestTransaction`, plus `TransactionUUID`.
    static func arguments(of action: Action) -> [String: DBusValue] {
        let kind: Telephony1.Action.Kind
        switch action.kind {
        case .start(let handle, let video, let contactIdentifier):
            kind = .start(handle: handle.value, handleType: handle.type.rawValue, video: video, contactIdentifier: contactIdentifier, provider: nil)
        case .answer: kind = .answer
        case .end: kind = .end
        case .setHeld(let onHold): kind = .setHeld(onHold)
        case .setMuted(let muted): kind = .setMuted(muted)
        case .setGroup(let other): kind = .setGroup(with: other?.apiString ?? "")
        case .playDTMF(let digits, let type): kind = .playDTMF(digits: digits, type: type.rawValue)
        }
        return Telephony1.Action(callUUID: action.callUUID.apiString, kind: kind, transactionUUID: action.transactionID.apiString).arguments
    }
}
