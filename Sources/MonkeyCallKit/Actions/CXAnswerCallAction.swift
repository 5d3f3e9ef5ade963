import FoundationEssentials

/// Answer an incoming call (CallKit's `CXAnswerCallAction`).
public final class CXAnswerCallAction: CXCallAction {
    public let outcome: CXActionOutcome

    public init(call callUUID: UUID) {
        outcome = CXActionOutcome(call: callUUID)
    }

    /// Fulfils the action, noting when the call connected.
    public func fulfill(withDateConnected date: Date) { outcome.finish(fulfilled: true, at: date) }
}
