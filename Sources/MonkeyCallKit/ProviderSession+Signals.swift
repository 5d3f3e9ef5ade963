import DBus
import FoundationEssentials
import MonkeyCallAPI

/// The signals the service sends the provider, turned into delegate calls.
extension ProviderSession {
    typealias API = Telephony1.Provider

    func receive(_ message: Message) {
        guard !isInvalidating, let member = message.member, let path = message.path else { return }
        switch state {
        case .registered(let mine):
            guard path == mine else { return }
        case .registering:
            if earlySignals.count < 1000 { earlySignals.append(message) }
            return
        default:
            return
        }
        let arguments = (try? message.arguments()) ?? []
        switch member {
        case API.didBegin.name:
            provider?.deliverBegin()
        case API.performAction.name:
            guard let action = ActionCoding.action(arguments) else { return }
            guard let provider else { return }
            action.outcome.deliver(to: provider)
            pendingActions[action.uuid] = action
            deliver { $0.dispatch(action, from: $1) }
        case API.timedOutPerformingAction.name:
            guard case .string(let id)? = arguments.first, let uuid = UUID(uuidString: id) else { return }
            let action: any CXCallAction
            if let pending = pendingActions.removeValue(forKey: uuid) {
                action = pending
            } else if arguments.count == 3, case .string(let call) = arguments[2], let callUUID = UUID(uuidString: call) {
                action = ForgottenCallAction(uuid: uuid, call: callUUID)
            } else {
                return
            }
            action.outcome.markComplete()
            deliver { $0.provider($1, timedOutPerforming: action) }
        case API.didReset.name:
            reset()
        case API.didActivateAudioSession.name:
            deliver { $0.provider($1, didActivate: AudioSession(isActive: true)) }
        case API.didDeactivateAudioSession.name:
            deliver { $0.provider($1, didDeactivate: AudioSession(isActive: false)) }
        case API.didRequestShowApp.name:
            guard case .string(let call)? = arguments.first, let uuid = UUID(uuidString: call) else { return }
            deliver { $0.provider($1, didRequestShowAppFor: uuid) }
        default:
            break
        }
    }
}
