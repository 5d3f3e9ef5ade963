import Foundation
import MonkeyCallKit
import Synchronization

/// The app's calls, and the user's requests about them sent to the system
/// (the seed sample's `ActiveCallManager`). Lives on the app's queue; the calls are
/// behind a `Mutex`, so that the compiler can check they are shared safely.
final class ActiveCallManager: Sendable {
    private let callController: CXCallController
    private let calls = Mutex<[ActiveCall]>([])

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
        calls.withLock { $0.first { $0.uuid == uuid } }
    }

    func addCall(_ call: ActiveCall) {
        calls.withLock { $0.append(call) }
    }

    func removeCall(_ call: ActiveCall) {
        calls.withLock { $0.removeAll { $0 === call } }
    }

    /// Forgets every call; returns how many there were.
    func removeAllCalls() -> Int {
        calls.withLock { calls in
            defer { calls.removeAll() }
            return calls.count
        }
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
