import DBus
import MonkeyCallAPI
import Foundation

/// Play touch tones on a call (CallKit's `CXPlayDTMFCallAction`).
public final class CXPlayDTMFCallAction: CXCallAction, @unchecked Sendable {
    public enum ActionType: Int, Sendable, CaseIterable, APINamed {
        case singleTone = 1
        case softPause = 2
        case hardPause = 3
    }

    public var digits: String
    public var type: ActionType

    public init(call callUUID: UUID, digits: String, type: ActionType) {
        self.digits = digits
        self.type = type
        super.init(call: callUUID)
    }
}
