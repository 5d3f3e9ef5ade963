import Foundation
import MonkeyCallKit

/// The app's calls, and the user's requests about them sent to the system
/// (the seed sample's `ActiveCallManager`). Lives on the app's queue.
final class ActiveCallManager: @unchecked Sendable {
    private let callController: CXCallController
    var calls: [ActiveCall] = []

    init(queue: DispatchQueue, busAddress: String?) {
        callController = CXCallController(queue: queue, busAddress: busAddress)
    }

    private func sendTransactionRequest(_ transaction: CXTransaction) {
        callController.request(transaction) { error in
            if let error {
                Log.say("The system refused the request: \(error)")
            } else {
                Log.say("The system accepted the request.")
            }
        }
    }

    func findCall(_ uuid: UUID) -> ActiveCall? {
        calls.first { $0.uuid == uuid }
    }

    /// Asks the system to start a call to `contact`.
    func startCall(_ contact: String) {
        let handle = CXHandle(type: .generic, value: contact)
        sendTransactionRequest(CXTransaction(action: CXStartCallAction(call: UUID(), handle: handle)))
    }

    func endCall(_ call: ActiveCall) {
        sendTransactionRequest(CXTransaction(action: CXEndCallAction(call: call.uuid)))
    }

    func placeCallOnHold(_ call: ActiveCall) {
        sendTransactionRequest(CXTransaction(action: CXSetHeldCallAction(call: call.uuid, onHold: true)))
    }

    func removeCallFromOnHold(_ call: ActiveCall) {
        sendTransactionRequest(CXTransaction(action: CXSetHeldCallAction(call: call.uuid, onHold: false)))
    }
}
