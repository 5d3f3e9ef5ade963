import FoundationEssentials
import Synchronization

/// Mute or unmute the microphone of a call (CallKit's `CXSetMutedCallAction`).
public final class CXSetMutedCallAction: CXCallAction {
    public let outcome: CXActionOutcome
    private let muted: Mutex<Bool>

    public init(call callUUID: UUID, muted: Bool) {
        outcome = CXActionOutcome(call: callUUID)
        self.muted = Mutex(muted)
    }

    public var isMuted: Bool {
        get { muted.value }
        set { muted.value = newValue }
    }
}
