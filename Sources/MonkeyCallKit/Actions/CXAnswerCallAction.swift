import Foundation

/// Answer an incoming call (CallKit's `CXAnswerCallAction`).
public final class CXAnswerCallAction: CXCallAction, @unchecked Sendable {
    /// Fulfils the action, noting when the call connected.
    public func fulfill(withDateConnected date: Date) { finish(fulfilled: true, at: date) }
}
