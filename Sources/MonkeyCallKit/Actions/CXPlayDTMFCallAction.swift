import DBus
import FoundationEssentials
import MonkeyCallAPI
import Synchronization

/// Play touch tones on a call (CallKit's `CXPlayDTMFCallAction`).
public final class CXPlayDTMFCallAction: CXCallAction {
    public enum ActionType: Int, Sendable, CaseIterable {
        case singleTone = 1
        case softPause = 2
        case hardPause = 3
    }

    public let outcome: CXActionOutcome
    private let tones: Mutex<(digits: String, type: ActionType)>

    public init(call callUUID: UUID, digits: String, type: ActionType) {
        outcome = CXActionOutcome(call: callUUID)
        self.tones = Mutex((digits, type))
    }

    public var digits: String { get { tones[\.digits] } set { tones[\.digits] = newValue } }
    public var type: ActionType { get { tones[\.type] } set { tones[\.type] = newValue } }
}
