internal import CDBus
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A private connection to a message bus, driven by a serial dispatch queue: sends, receives,
/// replies and the bus's names. The objects it serves are an `ObjectServer`'s.
///
/// Every libdbus call on the connection happens on `queue`; handlers of
/// incoming calls and signals run there too. The public methods may be called
/// from any thread. Share one queue between a connection and the state it
/// serves, and that state needs no locks.
public final class Connection: Sendable {
    /// The libdbus connection, used on the queue only.
    private let handle: UncheckedSendable<OpaquePointer>
    var raw: OpaquePointer { handle.value }
    private let mainLoop: UncheckedSendable<MainLoop>
    public let queue: DispatchQueue
    /// The bus-assigned unique name, such as `:1.42`.
    public let uniqueName: String
    public let address: String

    private let connected = Atomic<Bool>(true)
    public var isConnected: Bool { connected.load(ordering: .acquiring) }
    /// What changes as messages come and go; touched on the queue only.
    private let confined = UncheckedSendable(State())
    var state: State { confined.value }

    /// The connection's mutable state, on its queue.
    final class State {
        var subscriptions: [UInt64: SignalSubscription] = [:]
        var nextSubscriptionID: UInt64 = 1
        var disconnectHandlers: [(DBusError) -> Void] = []
        /// Calls waiting for replies: failed when the connection closes, so no caller waits forever.
        var waiters: [ObjectIdentifier: ReplyWaiter] = [:]
        var nameWatches = NameWatches()
        /// Where incoming method calls go (`serveMethodCalls`): an object server's dispatch.
        var methodCalls: ((Message) -> Bool)?
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Connects to the bus at `address` and registers (`Hello`).
    public init(address: String, queue: DispatchQueue? = nil) throws(DBusError) {
        dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let raw = dbus_connection_open_private(address, &error) else {
            throw DBusError(consuming: &error, fallback: "cannot connect to \(address)")
        }
        // A lost bus must be reported to us, not end the process.
        dbus_connection_set_exit_on_disconnect(raw, 0)
        guard dbus_bus_register(raw, &error) != 0 else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw DBusError(consuming: &error, fallback: "cannot register with the bus at \(address)")
        }
        self.handle = UncheckedSendable(raw)
        self.address = address
        self.uniqueName = String(cString: dbus_bus_get_unique_name(raw))
        let queue = queue ?? DispatchQueue(label: "dbus.connection")
        queue.setSpecific(key: Connection.queueKey, value: ObjectIdentifier(queue))
        self.queue = queue
        self.mainLoop = UncheckedSendable(MainLoop(connection: raw, queue: queue))

        let filterContext = Unmanaged.passRetained(WeakConnection(self)).toOpaque()
        dbus_connection_add_filter(raw, { _, message, data in
            let box = Unmanaged<WeakConnection>.fromOpaque(data!).takeUnretainedValue()
            guard let connection = box.connection, let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return connection.receive(Message(taking: dbus_message_ref(message)))
                ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }, filterContext, { data in Unmanaged<WeakConnection>.fromOpaque(data!).release() })
        onQueue { self.mainLoop.value.install() }
    }

    /// Connects to the session bus (see `sessionBusAddress`).
    public static func sessionBus(queue: DispatchQueue? = nil) throws(DBusError) -> Connection {
        guard let address = sessionBusAddress else {
            throw DBusError(name: DBusError.Name.disconnected,
                            message: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")
        }
        return try Connection(address: address, queue: queue)
    }

    /// The session bus as sd-bus and GDBus find it: `DBUS_SESSION_BUS_ADDRESS` (or, for a program the
    /// bus started by activation, `DBUS_STARTER_ADDRESS`), else the socket systemd gives every user
    /// session, `$XDG_RUNTIME_DIR/bus`, when it is there. Nil when none is.
    public static var sessionBusAddress: String? {
        let environment = ProcessInfo.processInfo.environment
        if let address = [environment["DBUS_SESSION_BUS_ADDRESS"], environment["DBUS_STARTER_ADDRESS"]].compactMap({ $0 }).first(where: { !$0.isEmpty }) {
            return address
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        let socket = runtime + "/bus"
        var status = stat()
        guard stat(socket, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        // Escaped as an address value: a runtime folder may hold characters that are special there.
        guard let escaped = dbus_address_escape_value(socket) else { return nil }
        defer { dbus_free(escaped) }
        return "unix:path=" + String(cString: escaped)
    }

    /// The system bus as libdbus finds it: `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket.
    public static var systemBusAddress: String {
        let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        return address.isEmpty ? "unix:path=/var/run/dbus/system_bus_socket" : address
    }

    deinit {
        // Nobody else holds the connection now, so its queue state is ours to read.
        for waiter in state.waiters.values { waiter.finish(.failure(DBusError.disconnected("the connection was released"))) }
        let loop = mainLoop
        queue.async { loop.value.release() }
    }

    /// Closes the connection; pending calls fail and handlers receive no more messages.
    public func close() {
        onQueue {
            dbus_connection_close(self.raw)
            self.handleDisconnect()
        }
    }

    // MARK: Queue

    public var isOnQueue: Bool { DispatchQueue.getSpecific(key: Connection.queueKey) == ObjectIdentifier(queue) }

    /// Runs `work` on the queue: at once when already there, else asynchronously.
    public func onQueue(_ work: @escaping () -> Void) {
        if isOnQueue { work() } else {
            let work = UncheckedSendable(work)
            queue.async { work.value() }
        }
    }

    func onQueueSync<T>(_ work: () throws(DBusError) -> T) throws(DBusError) -> T {
        if isOnQueue { return try work() }
        return try withoutActuallyEscaping(work) { (work) throws(DBusError) -> T in
            let box = UncheckedSendable(work)
            let result = queue.sync { () -> UncheckedSendable<Result<T, DBusError>> in
                do throws(DBusError) { return UncheckedSendable(.success(try box.value())) } catch { return UncheckedSendable(.failure(error)) }
            }
            return try result.value.get()
        }
    }

    /// Runs `work` on the queue and waits for it (at once when already there).
    public func onQueueSync<T>(_ work: () -> T) -> T {
        if isOnQueue { return work() }
        return withoutActuallyEscaping(work) { work in
            let box = UncheckedSendable(work)
            return queue.sync { UncheckedSendable(box.value()) }.value
        }
    }

    /// Runs `work` on the queue and returns its result, suspending rather than blocking
    /// the calling thread: how Swift concurrency code reaches state that lives on the queue.
    public func performOnQueue<T>(_ work: @escaping () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedSendable<T>, Never>) in
            onQueue { continuation.resume(returning: UncheckedSendable(work())) }
        }.value
    }

    /// libdbus's timeouts armed on the queue (reply timeouts of calls awaiting their reply): none
    /// when no call is outstanding. Read on the queue.
    public var armedTimeouts: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return mainLoop.value.armedTimers
    }

    // MARK: Sending

    /// Sends a message that expects no reply (a signal, a reply, or a call with no reply wanted).
    public func send(_ message: Message) {
        // On the queue (every reply a handler returns): sent at once, without a closure to allocate.
        guard !isOnQueue else {
            if isConnected { dbus_connection_send(raw, message.pointer, nil) }
            return
        }
        onQueue {
            guard self.isConnected else { return }
            dbus_connection_send(self.raw, message.pointer, nil)
        }
    }

    /// Sends a method call and waits for its reply; an error reply is thrown as `DBusError`.
    public func send(call message: Message, timeout: Duration? = nil) async throws -> Message {
        try await Handoff.value { deliver in send(call: message, timeout: timeout, onReply: deliver) }
    }

    /// Sends a method call; `onReply` gets the reply (an error reply as a thrown `DBusError`) on the
    /// connection's queue. It needs no thread of Swift concurrency's pool, so a reply is handled
    /// however busy that pool is (a provider's registration must not wait for an app's tasks).
    public func send(call message: Message, timeout: Duration? = nil, onReply: @escaping @Sendable (Result<Message, Error>) -> Void) {
        let milliseconds: Int32 = timeout.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        let deliver: @Sendable (Result<Message, Error>) -> Void = { result in
            onReply(result.flatMap { reply in reply.error.map { .failure($0) } ?? .success(reply) })
        }
        onQueue {
            let waiter = ReplyWaiter(deliver) { [weak self] waiter in self?.state.waiters[ObjectIdentifier(waiter)] = nil }
            guard self.isConnected else { return waiter.finish(.failure(DBusError.disconnected("the connection to the bus is closed"))) }
            var pending: OpaquePointer? = nil
            guard dbus_connection_send_with_reply(self.raw, message.pointer, &pending, milliseconds) != 0 else {
                return waiter.finish(.failure(DBusError.noMemory))
            }
            guard let pending else { return waiter.finish(.failure(DBusError.disconnected("the connection to the bus is closed"))) }
            self.state.waiters[ObjectIdentifier(waiter)] = waiter
            dbus_pending_call_set_notify(pending, { pending, data in
                Unmanaged<ReplyWaiter>.fromOpaque(data!).takeUnretainedValue().finish(pending: pending!)
            }, Unmanaged.passRetained(waiter).toOpaque(), { data in Unmanaged<ReplyWaiter>.fromOpaque(data!).release() })
            // The notify function is not called for a call that completed before it was set.
            if dbus_pending_call_get_completed(pending) != 0 { waiter.finish(pending: pending) }
            dbus_pending_call_unref(pending)
        }
    }

    /// Calls a method and returns the reply's arguments.
    @discardableResult
    public func call(
        destination: String, path: ObjectPath, interface: String, member: String,
        _ arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member, arguments)
        return try await send(call: message, timeout: timeout).arguments()
    }

    /// Emits a signal, to everyone subscribed or, with `destination`, to that one connection only.
    public func emit(path: ObjectPath, interface: String, member: String, _ arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        send(try Message.signal(path: path, interface: interface, member: member, arguments, destination: destination))
    }

    // MARK: Receiving

    /// Called on the queue for each incoming message; true when it was handled.
    private func receive(_ message: Message) -> Bool {
        switch message.type {
        case .methodCall:
            if let serve = state.methodCalls, serve(message) { return true }
            // Nothing is served here.
            if let path = message.path { replyError(to: message, DBusError.unknownObject("no object at path \(path)")) }
            return true
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                handleDisconnect()
                return true
            }
            for subscription in state.subscriptions.values where subscription.rule.matches(message) {
                subscription.handler(message)
            }
            return false
        default:
            return false
        }
    }

    /// Registers `handler` for the messages that `rule` matches. The match is
    /// added on the bus too (unless `local`, for messages the bus sends us anyway).
    public func subscribe(_ rule: MatchRule, local: Bool = false, handler: @escaping (Message) -> Void) async throws -> Subscription {
        if !local { try await addMatch(rule) }
        let id: UInt64 = await withCheckedContinuation { continuation in
            onQueue {
                let id = self.state.nextSubscriptionID
                self.state.nextSubscriptionID += 1
                self.state.subscriptions[id] = SignalSubscription(rule: rule, handler: handler)
                continuation.resume(returning: id)
            }
        }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue { self.state.subscriptions[id] = nil }
            // No task: the reply only says the rule is gone, and nobody waits for it.
            if !local { self.callBus("RemoveMatch", [.string(rule.description)]) { _ in } }
        }
    }

    /// Registers `handler` to run once when the connection is lost.
    public func onDisconnect(_ handler: @escaping (DBusError) -> Void) {
        onQueue { self.state.disconnectHandlers.append(handler) }
    }

    /// Runs `handler` on the queue for each incoming method call, in place of the reply that
    /// nothing is served here (`ObjectServer`); `handler` returns false when it serves nothing now.
    /// One per connection: a later one replaces it.
    func serveMethodCalls(_ handler: @escaping (Message) -> Bool) {
        onQueueSync { state.methodCalls = handler }
    }

    /// Registers `handler` at once for the messages that `rule` matches that come here anyway (no
    /// match rule is added on the bus): `subscribe(_:local: true)` for code that cannot wait.
    func subscribeLocally(_ rule: MatchRule, handler: @escaping (Message) -> Void) -> Subscription {
        let id = onQueueSync { () -> UInt64 in
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            state.subscriptions[id] = SignalSubscription(rule: rule, handler: handler)
            return id
        }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue { self.state.subscriptions[id] = nil }
        }
    }

    /// Replies to `message` with `error`, when it wants a reply.
    func replyError(to message: Message, _ error: DBusError) {
        guard message.expectsReply, let reply = message.makeErrorReply(error) else { return }
        send(reply)
    }

    private func handleDisconnect() {
        guard connected.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let waiting = state.waiters.values
        state.waiters = [:]
        for waiter in waiting { waiter.finish(.failure(DBusError.disconnected("the connection to the bus at \(address) was closed"))) }
        let handlers = state.disconnectHandlers
        state.disconnectHandlers = []
        for handler in handlers { handler(DBusError.disconnected("the connection to the bus at \(address) was lost")) }
    }
}

/// Cancels a subscription or a watch when asked to, or when released.
public final class Subscription: Sendable {
    private let cancelAction: Mutex<(@Sendable () -> Void)?>
    init(_ cancel: @escaping @Sendable () -> Void) { cancelAction = Mutex(cancel) }
    /// Runs the action outside the lock: it may release the last reference to this.
    public func cancel() {
        let action = cancelAction.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
    deinit { cancel() }
}

struct SignalSubscription {
    let rule: MatchRule
    let handler: (Message) -> Void
}

private final class WeakConnection {
    weak var connection: Connection?
    init(_ connection: Connection) { self.connection = connection }
}

/// Resumes a continuation exactly once with the reply of a pending call.
final class ReplyWaiter {
    private var deliver: (@Sendable (Result<Message, Error>) -> Void)?
    private let onFinish: (ReplyWaiter) -> Void

    init(_ deliver: @escaping @Sendable (Result<Message, Error>) -> Void, onFinish: @escaping (ReplyWaiter) -> Void) {
        self.deliver = deliver
        self.onFinish = onFinish
    }

    func finish(_ result: Result<Message, Error>) {
        guard let deliver else { return }
        self.deliver = nil
        onFinish(self)
        deliver(result)
    }

    func finish(pending: OpaquePointer) {
        guard let reply = dbus_pending_call_steal_reply(pending) else { return }
        finish(.success(Message(taking: reply)))
    }
}

extension DBusError {
    /// Converts and frees a libdbus error.
    init(consuming error: inout CDBus.DBusError, fallback: String) {
        if dbus_error_is_set(&error) != 0 {
            self.init(name: error.name.map { String(cString: $0) } ?? Name.failed,
                      message: error.message.map { String(cString: $0) } ?? fallback)
        } else {
            self.init(name: Name.failed, message: fallback)
        }
        dbus_error_free(&error)
    }
}
