import FoundationEssentials
import Synchronization

/// Start an outgoing call (CallKit's `CXStartCallAction`).
public final class CXStartCallAction: CXCallAction {
    public let outcome: CXActionOutcome
    private let details: Mutex<(handle: CXHandle, isVideo: Bool, contactIdentifier: String?)>

    public init(call callUUID: UUID, handle: CXHandle) {
        outcome = CXActionOutcome(call: callUUID)
        self.details = Mutex((handle, false, nil))
    }

    public var handle: CXHandle { get { details[\.handle] } set { details[\.handle] = newValue } }
    public var isVideo: Bool { get { details[\.isVideo] } set { details[\.isVideo] = newValue } }
    public var contactIdentifier: String? { get { details[\.contactIdentifier] } set { details[\.contactIdentifier] = newValue } }

    /// Fulfils the action, noting when the call started.
    public func fulfill(withDateStarted date: Date) { outcome.finish(fulfilled: true, at: date) }
}
