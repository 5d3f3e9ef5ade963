import DBus
import FoundationEssentials
import MonkeyCallAPI

/// MonkeyCallKit's actions as the API's (`Telephony1.Action`, the coding the service shares), both
/// ways: a controller requests them in `RequestTransaction`, and the service sends them to the
/// provider in `PerformAction`.
enum ActionCoding {
    /// The action as `RequestTransaction` takes it: its kind (`start`, `answer`, …) and arguments.
    static func value(of action: any CXAction) -> ActionValue {
        guard let action = action as? any CXCallAction, let api = api(action) else { return ActionValue(kind: "", args: [:]) }
        return api.value
    }

    private static func api(_ action: any CXCallAction) -> Telephony1.Action? {
        let call = action.callUUID.apiString
        return switch action {
        case let start as CXStartCallAction:
            .start(call, handle: start.handle.value, handleType: start.handle.type.apiName, video: start.isVideo,
                   contactIdentifier: start.contactIdentifier ?? "")
        case is CXAnswerCallAction: .answer(call)
        case is CXEndCallAction: .end(call)
        case let held as CXSetHeldCallAction: .setHeld(call, held.isOnHold)
        case let muted as CXSetMutedCallAction: .setMuted(call, muted.isMuted)
        case let group as CXSetGroupCallAction: .setGroup(call, with: group.callUUIDToGroupWith.map(\.apiString) ?? "")
        case let dtmf as CXPlayDTMFCallAction: .playDTMF(call, digits: dtmf.digits, type: dtmf.type.apiName)
        default: nil
        }
    }

    /// The action for `PerformAction(action_uuid, kind, call_uuid, args)`, or nil when malformed or unknown.
    static func action(_ arguments: [DBusValue]) -> (any CXCallAction)? {
        guard let (id, api) = try? Telephony1.Action.performed(arguments),
              let uuid = UUID(uuidString: id), let callUUID = UUID(uuidString: api.callUUID) else { return nil }
        let action: any CXCallAction
        switch api.kind {
        case .start(let handle, let typeName, let video, let contactIdentifier, _):
            let start = CXStartCallAction(call: callUUID, handle: CXHandle(type: CXHandle.HandleType(apiName: typeName) ?? .generic, value: handle))
            start.isVideo = video
            start.contactIdentifier = contactIdentifier.isEmpty ? nil : contactIdentifier
            action = start
        case .answer: action = CXAnswerCallAction(call: callUUID)
        case .end: action = CXEndCallAction(call: callUUID)
        case .setHeld(let onHold): action = CXSetHeldCallAction(call: callUUID, onHold: onHold)
        case .setMuted(let muted): action = CXSetMutedCallAction(call: callUUID, muted: muted)
        case .setGroup(let other): action = CXSetGroupCallAction(call: callUUID, callUUIDToGroupWith: UUID(uuidString: other))
        case .playDTMF(let digits, let typeName):
            action = CXPlayDTMFCallAction(call: callUUID, digits: digits, type: CXPlayDTMFCallAction.ActionType(apiName: typeName) ?? .singleTone)
        }
        action.outcome.received(uuid: uuid, transactionUUID: api.transactionUUID.flatMap { UUID(uuidString: $0) })
        return action
    }
}
