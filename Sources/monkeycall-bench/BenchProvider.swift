import DBus
import FoundationEssentials
import MonkeyCallAPI

/// A VOIP app played by the benchmark: its own connection, one provider, and
/// a task that fulfils every action the service asks of it, in the order they
/// come. That includes the `set-held` actions the service adds to a provider's
/// active call when another provider's call is answered.
final class BenchProvider: Sendable {
    let connection: Connection
    let path: ObjectPath
    private let actions: AsyncStream<Message>.Continuation
    private let subscription: Subscription
    private let worker: Task<Void, Never>

    /// Registers a provider and starts fulfilling its actions; each fulfilled
    /// `answer` and `end` is signalled to `rendezvous` (`Lifecycles.fulfilledKey`).
    init(address: String, name: String, rendezvous: Rendezvous) async throws {
        let connection = try Connection(address: address)
        let path = try await connection.registerProvider(name)

        let (stream, actions) = AsyncStream<Message>.makeStream()
        subscription = try await connection.subscribe(Telephony1.Provider.performAction.matchRule) {
            actions.yield($0)
        }
        worker = Task {
            for await message in stream {
                guard let args = try? message.arguments(), args.count == 4,
                      case .string(let action) = args[0], case .string(let kind) = args[1], case .string(let call) = args[2]
                else { continue }
                do {
                    try await connection.telephony(Telephony1.Provider.fulfillAction, try UUID.bench(action), [:], at: path)
                    if kind == ActionName.answer.rawValue || kind == ActionName.end.rawValue { rendezvous.signal(Lifecycles.fulfilledKey(kind, call)) }
                } catch {
                    rendezvous.fail(BenchError("provider \(path) could not fulfil its \(kind) action on call \(call): \(error)"))
                }
            }
        }
        self.connection = connection
        self.path = path
        self.actions = actions
    }

    func reportIncoming(_ uuid: String, handle: String) async throws {
        _ = try await connection.telephony(Telephony1.Provider.reportNewIncomingCall, try UUID.bench(uuid), CallUpdate(handle: Handle(value: handle)), at: path)
    }

    /// Closing the connection removes the provider in the daemon. Call it
    /// only when no action is left to fulfil: a call still waiting for its
    /// reply when the connection closes is never answered.
    func close() {
        // Closed first, so that the RemoveMatch the cancellation sends fails
        // at once instead of being left pending on a closing connection.
        connection.close()
        subscription.cancel()
        actions.finish()
    }
}
