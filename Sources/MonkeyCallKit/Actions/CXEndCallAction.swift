import Foundation

/// End a call, or decline a ringing one (CallKit's `CXEndCallAction`).
public final class CXEndCallAction: CXCallAction, @unchecked Sendable {
    /// Fulfils the action, noting when the call ended.
    public func fulfill(withDateEnded date: Date) { finish(fulfilled: true, at: date) }
}
