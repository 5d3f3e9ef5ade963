import FoundationEssentials

/// End a call, or decline a ringing one (CallKit's `CXEndCallAction`).
public final class CXEndCallAction: CXCallAction {
    public let outcome: CXActionOutcome

    public init(call callUUID: UUID) {
        outcome = CXActionOutcome(call: callUUID)
    }

    /// Fulfils the action, noting when the call ended.
    public func fulfill(withDateEnded date: Date) { outcome.finish(fulfilled: true, at: date) }
}
