import Foundation
import MonkeyCallKit
import Synchronization

/// The MonkeyCall app's provider and its delegate (the seed sample's
/// `ProviderDelegate`): performs the system's actions on the app's calls and
/// reports incoming calls. Every callback runs on the app's queue.
final class ProviderDelegate: CXProviderDelegate, Sendable {
    let callManager: ActiveCallManager
    let configuration: CXProviderConfiguration
    let provider: CXProvider
    private let queue: DispatchQueue
    private let network: SimulatedNetwork

    init(callManager: ActiveCallManager, queue: DispatchQueue, network: SimulatedNetwork, busAddress: String?) {
        self.callManager = callManager
        self.queue = queue
        self.network = network
        let configuration = CXProviderConfiguration(localizedName: "MonkeyCall")
        configuration.maximumCallsPerCallGroup = 1
        configuration.supportedHandleTypes = [.generic, .phoneNumber]
        configuration.urlSchemes = [StartCallRequest.urlScheme]
        configuration.iconName = "call-start"
        configuration.desktopEntry = "monkeycall-demo"
        self.configuration = configuration
        provider = CXProvider(configuration: configuration, busAddress: busAddress)
        provider.setDelegate(self, queue: queue)
    }

    private let hasBegun = Mutex(false)

    func providerDidBegin(_ provider: CXProvider) {
        let again = hasBegun.withLock { begun in
            defer { begun = true }
            return begun
        }
        Log.say(again ? "MonkeyCall is ready again: the MonkeyCall service knows us now."
                      : "MonkeyCall is ready: the MonkeyCall service knows us now.")
    }

    func providerDidReset(_ provider: CXProvider) {
        let dropped = callManager.removeAllCalls()
        Log.say("The MonkeyCall service was reset: dropping all \(dropped) call(s).")
    }

    func provider(_ provider: CXProvider, perform action: CXStartCallAction) {
        let activeCall = ActiveCall(uuid: action.callUUID, handle: action.handle.value, outgoing: true, queue: queue, network: network)
        Log.say("Starting an outgoing call to \(activeCall.handle) (call \(activeCall.uuid.uuidString.lowercased())).")
        activeCall.startingConnectionChanged = { [weak self] call in
            guard call.isConnecting else { return }
            Log.say("The call to \(call.handle) is connecting.")
            self?.provider.reportOutgoingCall(with: call.uuid, startedConnectingAt: call.startedConnectingOn)
        }
        activeCall.connectedChanged = { [weak self] call in
            guard call.isConnected else { return }
            Log.say("The call to \(call.handle) is connected.")
            self?.provider.reportOutgoingCall(with: call.uuid, connectedAt: call.connectedOn)
        }
        activeCall.startCall { successful in
            complete(action, successful) { callManager.addCall(activeCall) }
        }
    }

    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
        guard let call = knownCall(for: action, toDo: "pick up") else { return }
        call.answerCall { successful in
            complete(action, successful) { Log.say("Answered the call from \(call.handle): it is active.") }
        }
    }

    func provider(_ provider: CXProvider, perform action: CXEndCallAction) {
        guard let call = knownCall(for: action, toDo: "end") else { return }
        call.endCall { successful in
            complete(action, successful) {
                callManager.removeCall(call)
                Log.say("The call with \(call.handle) ended.")
            }
        }
    }

    func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) {
        guard let call = knownCall(for: action, toDo: "hold or resume") else { return }
        call.isOnHold = action.isOnHold
        Log.say(action.isOnHold ? "The call with \(call.handle) is on hold." : "The call with \(call.handle) is off hold.")
        action.fulfill()
    }

    func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) {
        guard let call = knownCall(for: action, toDo: "mute or unmute") else { return }
        call.isMuted = action.isMuted
        Log.say(action.isMuted ? "The call with \(call.handle) is muted." : "The call with \(call.handle) is unmuted.")
        action.fulfill()
    }

    func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction) {
        guard let call = knownCall(for: action, toDo: "play tones on") else { return }
        Log.say("Playing the tones \(action.digits) on the call with \(call.handle).")
        action.fulfill()
    }

    /// The call an action is for; an action for a call we do not know fails.
    private func knownCall(for action: CXCallAction, toDo verb: String) -> ActiveCall? {
        if let call = callManager.findCall(action.callUUID) { return call }
        Log.say("Asked to \(verb) a call we do not know (\(action.callUUID.uuidString.lowercased())).")
        action.fail()
        return nil
    }

    /// Fulfils the action when the call did what it asked, after `done`; fails it when not.
    private func complete(_ action: CXAction, _ successful: Bool, then done: () -> Void) {
        guard successful else { return action.fail() }
        done()
        action.fulfill()
    }

    func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {
        Log.say("We took too long to perform \(action); the system gave up on it.")
    }

    func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) {
        Log.say("Audio is on: the call's sound may start.")
    }

    func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) {
        Log.say("Audio is off.")
    }

    /// Tells the system of an incoming call from `handle`.
    func reportIncomingCall(uuid: UUID, handle: String) {
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: handle)
        provider.reportNewIncomingCall(with: uuid, update: update) { [weak self] error in
            guard let self else { return }
            if let error {
                Log.say("The system refused the incoming call from \(handle): \(error)")
            } else {
                self.callManager.addCall(ActiveCall(uuid: uuid, handle: handle, outgoing: false, queue: self.queue, network: self.network))
                Log.say("Incoming call from \(handle) is ringing (call \(uuid.uuidString.lowercased())).")
            }
        }
    }
}
