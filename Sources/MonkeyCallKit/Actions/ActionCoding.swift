import DBus
import MonkeyCallAPI
import Foundation

/// Actions as the API has them, both ways: a controller requests them in `RequestTransaction`,
/// and the service sends them to the provider in `PerformAction`.
enum ActionCoding {
    /// The action as `RequestTransaction` takes it: its kind (`start`, `answer`, …) and arguments.
    static func value(of action: CXAction) -> ActionValue {
        guard let action = action as? CXCallAction else { return ActionValue(kind: "", args: [:]) }
        var args: [String: DBusValue] = [Telephony1.Key.callUUID: .string(APIValue.uuid(action.callUUID))]
        let kind: String
        switch action {
        case let start as CXStartCallAction:
            kind = "start"
            args[Telephony1.Key.handle] = .string(start.handle.value)
            args[Telephony1.Key.handleType] = .string(start.handle.type.apiName)
            args[Telephony1.Key.video] = .bool(start.isVideo)
            if let contactIdentifier = start.contactIdentifier { args[Telephony1.Key.contactIdentifier] = .string(contactIdentifier) }
        case is CXAnswerCallAction:
            kind = "answer"
        case is CXEndCallAction:
            kind = "end"
        case let held as CXSetHeldCallAction:
            kind = "set-held"
            args[Telephony1.Key.onHold] = .bool(held.isOnHold)
        case let muted as CXSetMutedCallAction:
            kind = "set-muted"
            args[Telephony1.Key.muted] = .bool(muted.isMuted)
        case let group as CXSetGroupCallAction:
            kind = "set-group"
            args[Telephony1.Key.groupWith] = .string(group.callUUIDToGroupWith.map(APIValue.uuid) ?? "")
        case let dtmf as CXPlayDTMFCallAction:
            kind = "play-dtmf"
            args[Telephony1.Key.digits] = .string(dtmf.digits)
            args[Telephony1.Key.type] = .string(dtmf.type.apiName)
        default:
            kind = ""
        }
        return ActionValue(kind: kind, args: args)
    }

    /// The action for `PerformAction(action_uuid, kind, call_uuid, args)`, or nil when malformed or unknown.
    static func action(_ arguments: [DBusValue]) -> CXCallAction? {
        guard arguments.count == 4, case .string(let id) = arguments[0], case .string(let kind) = arguments[1],
              case .string(let call) = arguments[2], let args = arguments[3].vardict,
              let uuid = UUID(uuidString: id), let callUUID = UUID(uuidString: call) else { return nil }
        func string(_ key: String) -> String? { if case .string(let value)? = args[key] { value } else { nil } }
        func bool(_ key: String) -> Bool { if case .bool(let value)? = args[key] { value } else { false } }
        let action: CXCallAction
        switch kind {
        case "start":
            let type = string(Telephony1.Key.handleType).flatMap(CXHandle.HandleType.init(apiName:)) ?? .generic
            let start = CXStartCallAction(call: callUUID, handle: CXHandle(type: type, value: string(Telephony1.Key.handle) ?? ""))
            start.isVideo = bool(Telephony1.Key.video)
            start.contactIdentifier = string(Telephony1.Key.contactIdentifier).flatMap { $0.isEmpty ? nil : $0 }
            action = start
        case "answer": action = CXAnswerCallAction(call: callUUID)
        case "end": action = CXEndCallAction(call: callUUID)
        case "set-held": action = CXSetHeldCallAction(call: callUUID, onHold: bool(Telephony1.Key.onHold))
        case "set-muted": action = CXSetMutedCallAction(call: callUUID, muted: bool(Telephony1.Key.muted))
        case "set-group":
            action = CXSetGroupCallAction(call: callUUID, callUUIDToGroupWith: string(Telephony1.Key.groupWith).flatMap { UUID(uuidString: $0) })
        case "play-dtmf":
            let type = string(Telephony1.Key.type).flatMap(CXPlayDTMFCallAction.ActionType.init(apiName:)) ?? .singleTone
            action = CXPlayDTMFCallAction(call: callUUID, digits: string(Telephony1.Key.digits) ?? "", type: type)
        default:
            return nil
        }
        action.uuid = uuid
        action.transactionUUID = string(Telephony1.Key.transactionUUID).flatMap { UUID(uuidString: $0) }
        return action
    }
}
