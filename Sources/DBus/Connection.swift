internal import CDBus
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A private connection to a message bus, driven by a serial dispatch queue.
///
/// Every libdbus call on the connection happens on `queue`; handlers of
/// incoming calls and signals run there too. The public methods may be called
/// from any thread. Share one queue between a connection and the state it
/// serves, and that state needs no locks.
public final class Connection: @unchecked Sendable {
    let raw: OpaquePointer
    let loop: MainLoop
    public let queue: DispatchQueue
    /// The bus-assigned unique name, such as `:1.42`.
    public let uniqueName: String
    public let address: String

    public private(set) var isConnected = true
    var objects = ObjectTree()
    private var subscriptions: [UInt64: SignalSubscription] = [:]
    private var nextSubscriptionID: UInt64 = 1
    private var disconnectHandlers: [(DBusError) -> Void] = []
    /// Calls waiting for replies: failed when the connection closes, so no caller waits forever.
    private var waiters: [ObjectIdentifier: ReplyWaiter] = [:]
    var nameWatches = NameWatches()
    /// Who is behind each caller, and the policy that uses it (`setAccessPolicy`).
    var callers = CallerRegistry()
    /// Who hears signals when there is an access policy.
    var audience = SignalAudience()
    /// The most entries an `a{sv}` argument of an incoming call may have (`limitVariantDictionaries`).
    var maximumVariantDictionaryEntries = Int.max
    /// The most elements an array argument of an incoming call may have (`limitArrays`).
    var maximumArrayElements = Int.max
    /// The most bytes the arguments of an incoming call may take, unless its method says more (`limitArgumentBytes`).
    var maximumArgumentBytes = Int.max

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
        self.raw = raw
        self.address = address
        self.uniqueName = String(cString: dbus_bus_get_unique_name(raw))
        let queue = queue ?? DispatchQueue(label: "dbus.connection")
        queue.setSpecific(key: Connection.queueKey, value: ObjectIdentifier(queue))
        self.queue = queue
        self.loop = MainLoop(connection: raw, queue: queue)

        let filterContext = Unmanaged.passRetained(WeakConnection(self)).toOpaque()
        dbus_connection_add_filter(raw, { _, message, data in
            let box = Unmanaged<WeakConnection>.fromOpaque(data!).takeUnretainedValue()
            guard let connection = box.connection, let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return connection.receive(Message(taking: dbus_message_ref(message)))
                ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }, filterContext, { data in Unmanaged<WeakConnection>.fromOpaque(data!).release() })
        onQueue { self.loop.install() }
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
        for waiter in waiters.values { waiter.finish(.failure(DBusError.disconnected("the connection was released"))) }
        let loop = self.loop
        queue.async { loop.release() }
    }

    /// Closes the connection; pending calls fail and handlers receive no more messages.
    public func close() {
        onQueue {
            dbus_connection_close(self.raw)
            self.handleDisconnect()
        }
    }

    /// Incoming calls whose `a{sv}` arguments (at any depth) have more than `entries` entries are
    /// refused with InvalidArgs as they are read, before the rest is decoded.
    public func limitVariantDictionaries(to entries: Int) {
        onQueueSync { maximumVariantDictionaryEntries = entries }
    }

    /// Incoming calls whose array arguments (at any depth) have more than `elements` elements are
    /// refused with InvalidArgs as they are read: the work one call can make is bounded.
    public func limitArrays(to elements: Int) {
        onQueueSync { maximumArrayElements = elements }
    }

    /// Incoming calls whose arguments take more than `bytes` on the wire (unless their method
    /// declares a bound of its own, `MethodSpec.maximumArgumentBytes`) are refused with
    /// InvalidArgs from the message's header, before anything is decoded.
    public func limitArgumentBytes(to bytes: Int) {
        onQueueSync { maximumArgumentBytes = bytes }
    }

    /// Under an access policy, each account's calls (`Caller.account`) may take `burst` bytes on
    /// the wire, then `perSecond`; past that they are refused with LimitsExceeded before anything of
    /// them is read (`ArgumentBytesBudget`).
    public func limitArgumentBytesPerAccount(burst: Int, perSecond: Int) {
        onQueueSync { callers.argumentBytes = ArgumentBytesBudget(burst: burst, perSecond: perSecond) }
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
        return loop.armedTimers
    }

    // MARK: Sending

    /// Sends a message that expects no reply (a signal, a reply, or a call with no reply wanted).
    public func send(_ message: Message) {
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
            let waiter = ReplyWaiter(deliver) { [weak self] waiter in self?.waiters[ObjectIdentifier(waiter)] = nil }
            guard self.isConnected else { return waiter.finish(.failure(DBusError.disconnected("the connection to the bus is closed"))) }
            var pending: OpaquePointer? = nil
            guard dbus_connection_send_with_reply(self.raw, message.pointer, &pending, milliseconds) != 0 else {
                return waiter.finish(.failure(DBusError.noMemory))
            }
            guard let pending else { return waiter.finish(.failure(DBusError.disconnected("the connection to the bus is closed"))) }
            self.waiters[ObjectIdentifier(waiter)] = waiter
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
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(arguments)
        return try await send(call: message, timeout: timeout).arguments()
    }

    /// Emits a signal, to everyone subscribed or, with `destination`, to that one connection only.
    public func emit(path: ObjectPath, interface: String, member: String, _ arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        let message = try Message.signal(path: path, interface: interface, member: member)
        try message.append(arguments)
        if let destination { try message.setDestination(destination) }
        send(message)
    }

    // MARK: Receiving

    /// Called on the queue for each incoming message; true when it was handled.
    private func receive(_ message: Message) -> Bool {
        switch message.type {
        case .methodCall:
            handleMethodCall(message)
            return true
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                handleDisconnect()
                return true
            }
            for subscription in subscriptions.values where subscription.rule.matches(message) {
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
                let id = self.nextSubscriptionID
                self.nextSubscriptionID += 1
                self.subscriptions[id] = SignalSubscription(rule: rule, handler: handler)
                continuation.resume(returning: id)
            }
        }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue { self.subscriptions[id] = nil }
            // No task: the reply only says the rule is gone, and nobody waits for it.
            if !local { self.callBus("RemoveMatch", [.string(rule.description)]) { _ in } }
        }
    }

    /// Registers `handler` to run once when the connection is lost.
    public func onDisconnect(_ handler: @escaping (DBusError) -> Void) {
        onQueue { self.disconnectHandlers.append(handler) }
    }

    private func handleDisconnect() {
        guard isConnected else { return }
        isConnected = false
        let waiting = waiters.values
        waiters = [:]
        for waiter in waiting { waiter.finish(.failure(DBusError.disconnected("the connection to the bus at \(address) was closed"))) }
        let handlers = disconnectHandlers
        disconnectHandlers = []
        for handler in handlers { handler(DBusError.disconnected("the connection to the bus at \(address) was lost")) }
    }
}

/// Carries a value across to the one queue (or thread) that uses it: the project's one wrapper
/// for what the compiler cannot check (C objects, closures and delegates kept on one queue).
public struct UncheckedSendable<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
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
private final class ReplyWaiter {
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
