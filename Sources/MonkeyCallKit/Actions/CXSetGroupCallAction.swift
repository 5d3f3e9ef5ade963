import Foundation

/// Merge a call into another call's group, or take it out of its group
/// with nil (CallKit's `CXSetGroupCallAction`).
public final class CXSetGroupCallAction: CXCallAction, @unchecked Sendable {
    public var callUUIDToGroupWith: UUID?

    public init(call callUUID: UUID, callUUIDToGroupWith: UUID?) {
        self.callUUIDToGroupWith = callUUIDToGroupWith
        super.init(call: callUUID)
    }
}
