import DBus
import MonkeyCallAPI
import Synchronization

/// A partial change to a call's details: only the properties that were set
/// are sent, the others stay as they are (CallKit's `CXCallUpdate`). What was
/// set is the API's own record; each property reads it back, with CallKit's
/// default when it was not set.
public final class CXCallUpdate: Sendable {
    private let fields = Mutex(Telephony1.CallUpdate())

    /// What was set, as the API sends it.
    var record: Telephony1.CallUpdate { fields.value }

    public init() {}

    /// The other party.
    public var remoteHandle: CXHandle? {
        get {
            let record = record
            return record.handle.map { CXHandle(type: record.handleType.flatMap(CXHandle.HandleType.init(apiName:)) ?? .generic, value: $0) }
        }
        set { fields.withLock { ($0.handle, $0.handleType) = (newValue?.value, newValue?.type.apiName) } }
    }
    /// The caller's name as the app knows it.
    public var localizedCallerName: String? {
        get { record.localizedCallerName }
        set { fields[\.localizedCallerName] = newValue }
    }
    public var supportsHolding: Bool { get { self[\.supportsHolding, or: true] } set { self[\.supportsHolding, or: true] = newValue } }
    public var supportsGrouping: Bool { get { self[\.supportsGrouping, or: false] } set { self[\.supportsGrouping, or: false] = newValue } }
    public var supportsUngrouping: Bool { get { self[\.supportsUngrouping, or: false] } set { self[\.supportsUngrouping, or: false] = newValue } }
    public var supportsDTMF: Bool { get { self[\.supportsDTMF, or: true] } set { self[\.supportsDTMF, or: true] = newValue } }
    public var hasVideo: Bool { get { self[\.hasVideo, or: false] } set { self[\.hasVideo, or: false] = newValue } }

    /// A flag of the update: CallKit's default until it is set.
    private subscript(_ flag: WritableKeyPath<Telephony1.CallUpdate, Bool?>, or defaultValue: Bool) -> Bool {
        get { fields[flag] ?? defaultValue }
        set { fields[flag] = newValue }
    }

    /// The update as the API's `a{sv}`: the keys that were set, no others.
    var dbusValue: DBusValue { record.dbusValue }
    var entries: [String: DBusValue] { record.entries }
}
