import DBus
import Foundation
import MonkeyCallAPI

/// One bus connection per process and bus, shared by the app's providers,
/// call controllers and observers, so that the service sees them as one app
/// (a `start` action then goes to the app's own provider). Everything that
/// uses it keeps its state on the connection's queue.
final class ServiceConnection: @unchecked Sendable {
    let connection: Connection
    var queue: DispatchQueue { connection.queue }
    /// Where the kit's tasks for this connection run (see `SerialTaskExecutor.monkeyCallKit`).
    let tasks = SerialTaskExecutor(label: "org.monkeycall.MonkeyCallKit")
    /// Done once `NameOwnerChanged` of the service is followed.
    private var watching: Task<Void, Never>!
    /// On the queue: who wants to hear that the service's owner changed.
    private var ownerSubscription: Subscription?
    private var ownerListeners: [ObjectIdentifier: (_ old: String, _ new: String) -> Void] = [:]

    /// A service connection of its own (tests use it to play a second process).
    init(address: String?) throws(DBusError) {
        let queue = DispatchQueue(label: "MonkeyCallKit.serviceConnection")
        if let address {
            connection = try Connection(address: address, queue: queue)
        } else {
            connection = try Connection.sessionBus(queue: queue)
        }
        let rule = MatchRule(sender: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                             member: "NameOwnerChanged", arg0: Telephony1.busName)
        connection.onDisconnect { [weak self] _ in
            // The bus is gone, and the service with it for us. A later one gets a new connection.
            guard let self else { return }
            ServiceConnection.forget(self)
            for listener in self.ownerListeners.values { listener("", "") }
        }
        watching = Task(executorPreference: tasks) { [connection] in
            let subscription = try? await connection.subscribe(rule) { [weak self] message in
                guard let self, let args = try? message.arguments(), args.count == 3,
                      case .string(let old) = args[1], case .string(let new) = args[2] else { return }
                for listener in self.ownerListeners.values { listener(old, new) }
            }
            await withCheckedContinuation { continuation in
                connection.onQueue { [weak self] in
                    self?.ownerSubscription = subscription
                    continuation.resume()
                }
            }
        }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var links: [String: ServiceConnection] = [:]

    /// The process's service connection on the bus at `address`, or to the session bus.
    static func shared(address: String? = nil) throws(DBusError) -> ServiceConnection {
        lock.lock()
        defer { lock.unlock() }
        let key = address ?? ""
        if let serviceConnection = links[key] { return serviceConnection }
        let serviceConnection = try ServiceConnection(address: address)
        links[key] = serviceConnection
        return serviceConnection
    }

    private static func forget(_ serviceConnection: ServiceConnection) {
        lock.withLock { links = links.filter { $0.value !== serviceConnection } }
    }

    // MARK: Registrations in flight

    /// On the queue: providers of this process on their way to being registered.
    private var registering = 0
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []

    func beginRegistering() {
        connection.onQueue { self.registering += 1 }
    }

    func endRegistering() {
        connection.onQueue {
            self.registering -= 1
            guard self.registering == 0 else { return }
            let waiters = self.settledWaiters
            self.settledWaiters = []
            waiters.forEach { $0.resume() }
        }
    }

    /// Waits until no provider of this process is registering, so that a
    /// request made right after creating a provider finds it, as in CallKit.
    func registrationsSettled() async {
        await withCheckedContinuation { continuation in
            connection.onQueue {
                if self.registering == 0 { continuation.resume() } else { self.settledWaiters.append(continuation) }
            }
        }
    }

    /// Waits until changes of the service's owner are followed.
    func ready() async { await watching.value }

    /// On the queue: `listener(old, new)` runs there for each change of the service's owner.
    func addOwnerListener(_ owner: AnyObject, _ listener: @escaping (_ old: String, _ new: String) -> Void) {
        let id = ObjectIdentifier(owner)
        connection.onQueue { self.ownerListeners[id] = listener }
    }

    func removeOwnerListener(_ owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        connection.onQueue { self.ownerListeners[id] = nil }
    }

    /// Calls the service; D-Bus errors come back as they are.
    @discardableResult
    func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member, arguments)
    }
}
