import DBus
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// `CallController` on the root object: apps and the desktop ask for calls to start, be answered,
/// held, ended; the switchboard runs each request as a transaction and its end is announced to
/// the requester alone (`TransactionCompleted`).
@TelephonyActor
final class CallControllerInterface: ServiceObject, SwitchboardObserver {
    private let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    /// Runs a transaction for `requester` and returns its UUID in the API's form.
    func request(_ actions: [ActionRequest], from requester: String) throws -> String {
        try context.switchboard.requestTransaction(actions, requester: requester, app: context.appID(of: requester)).id.apiString
    }

    /// A call to `handle` through the app `appKey` (a sandboxed app's id, a host app's Name): an app
    /// that registers another's Name does not receive its calls.
    func startCall(to handle: Handle, through appKey: String, from requester: String) throws -> String {
        guard let provider = context.switchboard.orderedProviders.last(where: { $0.appKey == appKey }) else {
            throw APIError.noProvider("\(appKey) is not running, so it cannot place the call")
        }
        let uuid = UUID()
        _ = try request([.start(uuid, handle: handle, provider: provider.id)], from: requester)
        return uuid.apiString
    }

    func interface() -> Interface {
        typealias Controller = Telephony1.CallController
        return Interface(Controller.interface) {
            method(Controller.requestTransaction) { controller, call, actions in
                try controller.request(try actions.map { try Decode.action(kind: $0.kind, $0.args) }, from: call.sender)
            }
            method(Controller.startCall) { controller, call, handle, options in
                var args = options
                args[Telephony1.Key.handle] = .string(handle)
                if args[Telephony1.Key.callUUID] == nil { args[Telephony1.Key.callUUID] = .string(UUID().apiString) }
                let start = try Decode.action(kind: "start", args)
                return (start.callUUID.apiString, try controller.request([start], from: call.sender))
            }
            method(Controller.answerCall) { controller, call, uuid in try controller.request([.answer(try Decode.uuid(uuid))], from: call.sender) }
            method(Controller.endCall) { controller, call, uuid in try controller.request([.end(try Decode.uuid(uuid))], from: call.sender) }
            method(Controller.setHeld) { controller, call, uuid, onHold in
                try controller.request([.setHeld(try Decode.uuid(uuid), onHold)], from: call.sender)
            }
            method(Controller.setMuted) { controller, call, uuid, muted in
                try controller.request([.setMuted(try Decode.uuid(uuid), muted)], from: call.sender)
            }
            method(Controller.setGroup) { controller, call, uuid, other in
                let action = try Decode.action(.setGroup(uuid, with: other))
                return try controller.request([action], from: call.sender)
            }
            method(Controller.playDTMF) { controller, call, uuid, digits, type in
                let action = try Decode.action(.playDTMF(uuid, digits: digits, type: type))
                return try controller.request([action], from: call.sender)
            }
            Signal(Controller.transactionCompleted)
        }
    }

    func observe(_ event: SwitchboardEvent) {
        guard case .transactionCompleted(let transaction, let error) = event, let requester = transaction.requester else { return }
        let failure = error?.dbusError
        try? context.objects.exportedObject(at: Telephony1.rootPath)?.emit(
            Telephony1.CallController.transactionCompleted,
            transaction.id.apiString, error == nil, failure?.name ?? "", failure?.message ?? "", to: requester)
    }
}
