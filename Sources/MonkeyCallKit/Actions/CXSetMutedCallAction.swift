import Foundation

/// Mute or unmute the microphone of a call (CallKit's `CXSetMutedCallAction`).
public final class CXSetMutedCallAction: CXCallAction, @unchecked Sendable {
    public var isMuted: Bool

    public init(call callUUID: UUID, muted: Bool) {
        self.isMuted = muted
        super.init(call: callUUID)
    }
}
