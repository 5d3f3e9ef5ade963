import DBus
import FoundationEssentials
import Logging
import QueueExecutor
import TelephonyCore

/// Keeps the machine awake while a call is up: a logind inhibitor lock
/// (`org.freedesktop.login1.Manager.Inhibit("sleep:idle", "MonkeyCall", why, "block")`
/// on the system bus), held as the file descriptor logind returns and
/// released by closing it when the last call ends.
///
/// Without a system bus or logind, calls go on as ever: one log line says so.
/// logind is asked off the actor, over a system bus connection of its own.
@TelephonyActor
final class SleepInhibitor: SwitchboardObserver {
    static let logind = "org.freedesktop.login1"
    static let path: ObjectPath = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    private let address: String
    private let logger: Logger
    /// Why the machine is kept awake, for a call ("Call with Alice").
    private let reason: (Call) -> String
    /// Reached on the first call; nil until then, and after it is lost.
    private var systemBus: Connection?
    /// The calls, as the switchboard has them.
    private let switchboard: Switchboard
    /// Whether a call kept the machine awake when last told: a stretch of calls asks logind once.
    private var wasUp = false
    private var lock: UnixFD?
    private var requesting = false
    /// Only the first failure is logged above debug level.
    private var warned = false
    /// After logind could not be reached, calls do not ask again for 5 minutes: where there is no
    /// system bus or no logind, every call would otherwise try to connect, off the queue.
    private var retry: RetryAfterFailure

    init(systemBusAddress: String, switchboard: Switchboard, logger: Logger, reason: @escaping (Call) -> String) {
        address = systemBusAddress
        self.switchboard = switchboard
        retry = RetryAfterFailure(clock: switchboard.clock, interval: 5 * 60)
        self.logger = logger
        self.reason = reason
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded, .callChanged, .callRemoved: callsChanged()
        default: break
        }
    }

    /// The calls that keep the machine awake: dialing, connecting, active or held.
    private var firstCallUp: Call? { switchboard.calls.first { [.dialing, .connecting, .active, .held].contains($0.state) } }

    /// Whenever a call changes or ends.
    private func callsChanged() {
        let callUp = firstCallUp
        defer { wasUp = callUp != nil }
        if callUp == nil, let lock {
            self.lock = nil
            logger.debug("released the sleep inhibitor (\(lock))")
        }
        // Asked once per stretch of calls: a missing logind is not asked again on every change of a call.
        guard !wasUp, let callUp, lock == nil, !requesting, retry.mayTry else { return }
        requesting = true
        let reason = reason(callUp)
        let known = systemBus
        Task(executorPreference: SerialTaskExecutor.shared) { [self] in
            let (bus, result) = await Self.inhibit(reason, address: address, reusing: known)
            await finished(result, systemBus: bus)
        }
    }

    /// The request is over; the system bus it used is kept for the next one.
    private func finished(_ result: Result<UnixFD, Error>, systemBus: Connection?) {
        requesting = false
        self.systemBus = systemBus
        switch result {
        case .success(let fd):
            warned = false
            retry.succeeded()
            // The call may have ended while logind answered: then the lock goes at once.
            if firstCallUp != nil { lock = fd }
        case .failure(let error):
            retry.failed()
            if warned {
                logger.debug("no sleep inhibitor for the call: \(error)")
            } else {
                logger.warning("logind is not available (\(error)): calls will not keep the machine awake (asked again by a call 5 minutes from now or later)")
                warned = true
            }
        }
    }

    /// Off the queue: asks logind, over `known` or a new connection; returns the connection to keep (nil when lost).
    private nonisolated static func inhibit(_ reason: String, address: String, reusing known: Connection?) async -> (Connection?, Result<UnixFD, Error>) {
        var bus: Connection?
        do {
            let connection = try known ?? Connection(address: address)
            bus = connection
            let reply = try await connection.call(destination: Self.logind, path: Self.path, interface: Self.manager, member: "Inhibit",
                                           [.string("sleep:idle"), .string("MonkeyCall"), .string(reason), .string("block")], timeout: .seconds(5))
            guard case .unixFD(let fd)? = reply.first else { throw DBusError.failed("Inhibit replied without a file descriptor") }
            return (bus, .success(fd))
        } catch {
            // A lost connection is made anew next time; one that merely got an error reply is kept.
            let lost = (error as? DBusError)?.name == DBusError.Name.disconnected
            return (lost ? nil : bus, .failure(error))
        }
    }
}

/// When something that failed may be tried again: not before `interval` seconds on the clock.
struct RetryAfterFailure {
    private let clock: any TelephonyClock
    /// Microseconds.
    private let interval: UInt64
    private var notBefore: UInt64 = 0

    init(clock: any TelephonyClock, interval seconds: UInt64) {
        self.clock = clock
        interval = seconds * 1_000_000
    }

    var mayTry: Bool { clock.now >= notBefore }
    mutating func failed() { notBefore = clock.now + interval }
    mutating func succeeded() { notBefore = 0 }
}
