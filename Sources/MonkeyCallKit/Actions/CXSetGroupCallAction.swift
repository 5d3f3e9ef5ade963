import FoundationEssentials
import Synchronization

/// Merge a call into another call's group, or take it out of its group
/// with nil (CallKit's `CXSetGroupCallAction`).
public final class CXSetGroupCallAction: CXCallAction {
    public let outcome: CXActionOutcome
    private let other: Mutex<UUID?>

    public init(call callUUID: UUID, callUUIDToGroupWith: UUID?) {
        outcome = CXActionOutcome(call: callUUID)
        self.other = Mutex(callUUIDToGroupWith)
    }

    public var callUUIDToGroupWith: UUID? {
        get { other.value }
        set { other.value = newValue }
    }
}
