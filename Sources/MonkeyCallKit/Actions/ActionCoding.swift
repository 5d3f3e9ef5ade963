import DBus
import FoundationEssentials
import MonkeyCallAPI

/// Actions as the API has them, both ways: a controller requests them in `RequestTransaction`,
/// and the service sends them to the provider in `PerformAction`.
enum ActionCoding {
    /// The action as `RequestTransaction` takes it: its kind (`start`, `answer`, …) and arguments.
    static func value(of action: any CXAction) -> ActionValue {
        guard let action = action as? any CXCallAction, let kind = kind(of: action) else { return ActionValue(kind: "", args: [:]) }
        let api = Telephony1.Action(callUUID: APIValue.uuid(action.callUUID), kind: kind)
        return ActionValue(kind: kind.name, args: api.arguments)
    }

    private static func kind(of action: any CXCallAction) -> Telephony1.Action.Kind? {
        switch action {
        case let start as CXStartCallAction:
            .start(handle: start.handle.value, handleType: start.handle.type.apiName, video: start.isVideo,
                   contactIdentifier: start.contactIdentifier ?? "", provider: nil)
        case is CXAnswerCallAction: .answer
        case is CXEndCallAction: .end
        case let held as CXSetHeldCallAction: .setHeld(held.isOnHold)
        case let muted as CXSetMutedCallAction: .setMuted(muted.isMuted)
        case let group as CXSetGroupCallAction: .setGroup(with: group.callUUIDToGroupWith.map(APIValue.uuid) ?? "")
        case let dtmf as CXPlayDTMFCallAction: .playDTMF(digits: dtmf.digits, type: dtmf.type.apiName)
        default: nil
        }
    }

    /// The action for `PerformAction(action_uuid, kind, call_uuid, args)`, or nil when malformed or unknown.
    static func action(_ arguments: [DBusValue]) -> (any CXCallAction)? {
        guard arguments.count == 4, case .string(let id) = arguments[0], case .string(let kind) = arguments[1],
              case .string(let call) = arguments[2], var args = arguments[3].vardict,
              let uuid = UUID(uuidString: id), let callUUID = UUID(uuidString: call) else { return nil }
        args[Telephony1.Key.callUUID] = .string(call)
        guard let api = try? Telephony1.Action(kind: kind, arguments: args) else { return nil }
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
