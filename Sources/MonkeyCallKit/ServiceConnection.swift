import DBus
import Dispatch
import FoundationEssentials
import MonkeyCallAPI
import QueueExecutor
import Synchronization

/// One bus connection per process and bus, shared by the app's providers,
/// call controllers and observers, so that the service sees them as one app
/// (a `start` action then goes to the app's own provider).
///
/// An actor on the connection's queue: signal handlers and the disconnect handler run there
/// and enter it with `assumeIsolated`; the methods its users call from elsewhere post to it.
actor ServiceConnection {
    nonisolated let connection: Connection
    /// The connection's queue as an executor: the kit's other actors on the queue share it.
    nonisolated let executor: QueueExecutor
    /// Where the kit's tasks for this connection run (see `SerialTaskExecutor.monkeyCallKit`).
    nonisolated let tasks = SerialTaskExecutor(label: "org.monkeycall.MonkeyCallKit")
    /// Done once `NameOwnerChanged` of the service is followed.
    private var watching: Task<Void, Never>?
    /// Who wants to hear that the service's owner changed.
    private var ownerSubscription: Subscription?
    private var ownerListeners: [ObjectIdentifier: @Sendable (_ old: String, _ new: String) -> Void] = [:]

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A service connection of its own (tests use it to play a second process).
    init(address: String?) throws(DBusError) {
        let queue = DispatchQueue(label: "MonkeyCallKit.serviceConnection")
        if let address {
            connection = try Connection(address: address, queue: queue)
        } else {
            connection = try Connection.sessionBus(queue: queue)
        }
        executor = QueueExecutor(queue: queue)
        let rule = MatchRule(sender: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                             member: "NameOwnerChanged", arg0: Telephony1.busName)
        connection.onDisconnect { [weak self] _ in
            // The bus is gone, and the service with it for us. A later one gets a new connection.
            guard let self else { return }
            ServiceConnection.forget(self)
            self.assumeIsolated { $0.ownerChanged(from: "", to: "") }
        }
        let watching = Task(executorPreference: tasks) { [connection, weak self] in
            let subscription = try? await connection.subscribe(rule) { [weak self] message in
                guard let args = try? message.arguments(), args.count == 3,
                      case .string(let old) = args[1], case .string(let new) = args[2] else { return }
                self?.assumeIsolated { $0.ownerChanged(from: old, to: new) }
            }
            await self?.keep(subscription)
        }
        executor.async(on: self) { $0.watching = watching }
    }

    private func keep(_ subscription: Subscription?) {
        ownerSubscription = subscription
    }

    private func ownerChanged(from old: String, to new: String) {
        for listener in ownerListeners.values { listener(old, new) }
    }

    private static let links = Mutex<[String: ServiceConnection]>([:])

    /// The process's service connection on the bus at `address`, or to the session bus.
    static func shared(address: String? = nil) throws(DBusError) -> ServiceConnection {
        try links.withLock { links throws(DBusError) in
            let key = address ?? ""
            if let serviceConnection = links[key] { return serviceConnection }
            let serviceConnection = try ServiceConnection(address: address)
            links[key] = serviceConnection
            return serviceConnection
        }
    }

    private static func forget(_ serviceConnection: ServiceConnection) {
        links.withLock { $0 = $0.filter { $0.value !== serviceConnection } }
    }

    // MARK: Registrations in flight

    /// Providers of this process on their way to being registered.
    private var registering = 0
    private var settledWaiters: [CheckedContinuation<Void, Never>] = []

    nonisolated func beginRegistering() {
        executor.enter(self) { $0.registering += 1 }
    }

    nonisolated func endRegistering() {
        executor.enter(self) { serviceConnection in
            serviceConnection.registering -= 1
            guard serviceConnection.registering == 0 else { return }
            let waiters = serviceConnection.settledWaiters
            serviceConnection.settledWaiters = []
            waiters.forEach { $0.resume() }
        }
    }

    /// Waits until no provider of this process is registering, so that a
    /// request made right after creating a provider finds it, as in CallKit.
    func registrationsSettled() async {
        guard registering > 0 else { return }
        await withCheckedContinuation { settledWaiters.append($0) }
    }

    /// Waits until changes of the service's owner are followed.
    func ready() async {
        // The task is set by the first job on the queue, which runs before this one.
        await watching?.value
    }

    /// `listener(old, new)` runs on the queue for each change of the service's owner.
    nonisolated func addOwnerListener(_ owner: AnyObject, _ listener: @escaping @Sendable (_ old: String, _ new: String) -> Void) {
        let id = ObjectIdentifier(owner)
        executor.enter(self) { $0.ownerListeners[id] = listener }
    }

    nonisolated func removeOwnerListener(_ owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        executor.enter(self) { $0.ownerListeners[id] = nil }
    }

    /// Calls the service; D-Bus errors come back as they are.
    @discardableResult
    nonisolated func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member, arguments)
    }
}
