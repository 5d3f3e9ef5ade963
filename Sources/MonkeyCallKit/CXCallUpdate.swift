import DBus
import MonkeyCallAPI
import Synchronization

/// A partial change to a call's details: only the properties that were set
/// are sent, the others stay as they are (CallKit's `CXCallUpdate`). What was
/// set is the contract's own `CallUpdate`, the one type the service's core reads too; each
/// property reads it back, with CallKit's default when it was not set.
public final class CXCallUpdate: Sendable {
    private let fields = Mutex(CallUpdate())

    /// What was set, as the API sends it.
    var update: CallUpdate { fields.value }

    public init() {}

    /// The other party.
    public var remoteHandle: CXHandle? {
        get { update.handle.map { CXHandle(type: CXHandle.HandleType(apiName: $0.type.rawValue) ?? .generic, value: $0.value) } }
        set { fields[\.handle] = newValue.map { Handle(type: $0.type.word, value: $0.value) } }
    }
    /// The caller's name as the app knows it.
    public var localizedCallerName: String? {
        get { update.localizedCallerName }
        set { fields[\.localizedCallerName] = newValue }
    }
    public var supportsHolding: Bool { get { self[\.supportsHolding, or: true] } set { self[\.supportsHolding, or: true] = newValue } }
    public var supportsGrouping: Bool { get { self[\.supportsGrouping, or: false] } set { self[\.supportsGrouping, or: false] = newValue } }
    public var supportsUngrouping: Bool { get { self[\.supportsUngrouping, or: false] } set { self[\.supportsUngrouping, or: false] = newValue } }
    public var supportsDTMF: Bool { get { self[\.supportsDTMF, or: true] } set { self[\.supportsDTMF, or: true] = newValue } }
    public var hasVideo: Bool { get { self[\.hasVideo, or: false] } set { self[\.hasVideo, or: false] = newValue } }

    /// A flag of the update: CallKit's default until it is set.
    private subscript(_ flag: WritableKeyPath<CallUpdate, Bool?>, or defaultValue: Bool) -> Bool {
        get { fields[flag] ?? defaultValue }
        set { fields[flag] = newValue }
    }
}
