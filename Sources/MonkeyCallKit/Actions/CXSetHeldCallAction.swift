import Foundation

/// Put a call on hold or take it off hold (CallKit's `CXSetHeldCallAction`).
public final class CXSetHeldCallAction: CXCallAction, @unchecked Sendable {
    public var isOnHold: Bool

    public init(call callUUID: UUID, onHold: Bool) {
        self.isOnHold = onHold
        super.init(call: callUUID)
    }
}
