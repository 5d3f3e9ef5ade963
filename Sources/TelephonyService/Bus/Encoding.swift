import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core values as the API's D-Bus values.
enum Encode {
    /// A call as the API publishes it (its `Call` object's fields), named as the user knows the
    /// caller (`Call.displayName`, worked out once by screening).
    static func record(of call: Call) -> Telephony1.CallRecord {
        var record = Telephony1.CallRecord()
        record.uuid = call.uuid.apiString
        record.provider = Telephony1.providerPath(call.provider.rawValue)
        record.providerName = call.providerName
        record.handle = call.handle.value
        record.handleType = call.handle.type
        record.callerName = call.displayName
        record.outgoing = call.outgoing
        record.state = call.state
        record.onHold = call.onHold
        record.muted = call.muted
        record.silenced = call.silenced
        record.hasConnected = call.hasConnected
        record.hasEnded = call.hasEnded
        record.hasVideo = call.hasVideo
        record.group = call.group?.apiString ?? ""
        record.supportsHolding = call.supportsHolding
        record.supportsGrouping = call.supportsGrouping
        record.supportsUngrouping = call.supportsUngrouping
        record.supportsDTMF = call.supportsDTMF
        record.startedAt = call.startedAt
        record.connectedAt = call.connectedAt
        record.endedAt = call.endedAt
        return record
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
}
