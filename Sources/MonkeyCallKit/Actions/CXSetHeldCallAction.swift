import FoundationEssentials
import Synchronization

/// Put a call on hold or take it off hold (CallKit's `CXSetHeldCallAction`).
public final class CXSetHeldCallAction: CXCallAction {
    public let outcome: CXActionOutcome
    private let onHold: Mutex<Bool>

    public init(call callUUID: UUID, onHold: Bool) {
        outcome = CXActionOutcome(call: callUUID)
        self.onHold = Mutex(onHold)
    }

    public var isOnHold: Bool {
        get { onHold.value }
        set { onHold.value = newValue }
    }
}
