import DBus
import Dispatch
import FoundationEssentials
import MonkeyCallAPI
import QueueExecutor

/// Asks the service to perform the user's actions (CallKit's
/// `CXCallController`). A request's completion means the service accepted
/// the transaction and dispatched its actions, not that they succeeded.
/// Refusals are `CXErrorCodeRequestTransactionError`; a service that is not
/// running is `CXError` with code `serviceNotRunning`.
public final class CXCallController: Sendable {
    /// The calls of every provider, and their changes.
    public let callObserver: CXCallObserver
    let serviceConnection: ServiceConnection?
    let connectionError: CXError?
    private let completionQueue: DispatchQueue

    /// A controller on the session bus; completions run on a private queue.
    public convenience init() {
        self.init(queue: nil, busAddress: nil)
    }

    /// A controller on the session bus; completions run on `queue`.
    public convenience init(queue: DispatchQueue) {
        self.init(queue: queue, busAddress: nil)
    }

    /// A controller on the bus at `busAddress` (nil: the session bus).
    public convenience init(queue: DispatchQueue?, busAddress: String?) {
        do {
            self.init(serviceConnection: try ServiceConnection.shared(address: busAddress), error: nil, queue: queue)
        } catch {
            self.init(serviceConnection: nil, error: CXError(code: .noBus, name: error.name, message: error.message), queue: queue)
        }
    }

    init(serviceConnection: ServiceConnection?, error: CXError?, queue: DispatchQueue?) {
        self.serviceConnection = serviceConnection
        self.connectionError = error
        self.completionQueue = queue ?? DispatchQueue(label: "MonkeyCallKit.controller")
        self.callObserver = CXCallObserver(serviceConnection: serviceConnection)
    }

    /// Requests `transaction`; `completion` runs on the controller's queue with nil once it is accepted.
    public func request(_ transaction: CXTransaction, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let queue = completionQueue
        Task(executorPreference: serviceConnection?.tasks ?? SerialTaskExecutor.monkeyCallKit) {
            do {
                try await self.request(transaction)
                queue.async { completion(nil) }
            } catch {
                queue.async { completion(error) }
            }
        }
    }

    /// Requests `transaction`; returns once the service accepted it.
    public func request(_ transaction: CXTransaction) async throws {
        guard let serviceConnection else { throw connectionError ?? CXError.serviceNotRunning }
        await serviceConnection.registrationsSettled()
        let actions = transaction.actions.map(ActionCoding.value)
        do {
            let id = try await serviceConnection.connection.call(Telephony1.CallController.requestTransaction, destination: Telephony1.busName,
                                                    path: Telephony1.rootPath, actions)
            if let uuid = UUID(uuidString: id) {
                transaction.uuid = uuid
            }
        } catch {
            throw ErrorMapping.request(error)
        }
    }

    public func requestTransaction(with actions: [CXAction], completion: @escaping @Sendable ((any Error)?) -> Void) {
        request(CXTransaction(actions: actions), completion: completion)
    }

    public func requestTransaction(with action: CXAction, completion: @escaping @Sendable ((any Error)?) -> Void) {
        request(CXTransaction(action: action), completion: completion)
    }

    public func requestTransaction(with actions: [CXAction]) async throws {
        try await request(CXTransaction(actions: actions))
    }

    public func requestTransaction(with action: CXAction) async throws {
        try await request(CXTransaction(action: action))
    }
}
