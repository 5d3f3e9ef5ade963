import DBus
import MonkeyCallAPI

/// A partial change to a call's details: only the properties that were set
/// are sent, the others stay as they are (CallKit's `CXCallUpdate`).
public final class CXCallUpdate: @unchecked Sendable {
    /// What was set, as the API sends it.
    private(set) var record = Telephony1.CallUpdate()

    /// The other party.
    public var remoteHandle: CXHandle? {
        didSet { (record.handle, record.handleType) = (remoteHandle?.value, remoteHandle?.type.apiName) }
    }
    /// The caller's name as the app knows it.
    public var localizedCallerName: String? { didSet { record.localizedCallerName = localizedCallerName } }
    public var supportsHolding: Bool = true { didSet { record.supportsHolding = supportsHolding } }
    public var supportsGrouping: Bool = false { didSet { record.supportsGrouping = supportsGrouping } }
    public var supportsUngrouping: Bool = false { didSet { record.supportsUngrouping = supportsUngrouping } }
    public var supportsDTMF: Bool = true { didSet { record.supportsDTMF = supportsDTMF } }
    public var hasVideo: Bool = false { didSet { record.hasVideo = hasVideo } }

    public init() {}

    /// The update as the API's `a{sv}`: the keys that were set, no others.
    var dbusValue: DBusValue { record.dbusValue }
    var entries: [String: DBusValue] { record.entries }
}
