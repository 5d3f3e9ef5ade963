import FoundationEssentials
import Synchronization

/// Start an outgoing call (CallKit's `CXStartCallAction`).
public final class CXStartCallAction: CXCallAction {
    public let callUUID: UUID
    public let outcome = CXActionOutcome()
    private let details: Mutex<(handle: CXHandle, isVideo: Bool, contactIdentifier: String?)>

    public init(call callUUID: UUID, handle: CXHandle) {
        self.callUUID = callUUID
        self.details = Mutex((handle, false, nil))
    }

    public var handle: CXHandle {
        get { details.withLock { $0.handle } }
        set { details.withLock { $0.handle = newValue } }
    }
    public var isVideo: Bool {
        get { details.withLock { $0.isVideo } }
        set { details.withLock { $0.isVideo = newValue } }
    }
    public var contactIdentifier: String? {
        get { details.withLock { $0.contactIdentifier } }
        set { details.withLock { $0.contactIdentifier = newValue } }
    }

    /// Fulfils the action, noting when the call started.
    public func fulfill(withDateStarted date: Date) { outcome.finish(fulfilled: true, at: date) }
}
