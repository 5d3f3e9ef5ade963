import Foundation

/// Start an outgoing call (CallKit's `CXStartCallAction`).
public final class CXStartCallAction: CXCallAction, @unchecked Sendable {
    public var handle: CXHandle
    public var isVideo: Bool = false
    public var contactIdentifier: String?

    public init(call callUUID: UUID, handle: CXHandle) {
        self.handle = handle
        super.init(call: callUUID)
    }

    /// Fulfils the action, noting when the call started.
    public func fulfill(withDateStarted date: Date) { finish(fulfilled: true, at: date) }
}
