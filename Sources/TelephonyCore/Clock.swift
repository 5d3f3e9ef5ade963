import Foundation

/// The time source of the telephony core. Everything the core does with time
/// goes through it, so tests can drive timeouts with a `ManualClock`.
public protocol TelephonyClock: AnyObject {
    /// Microseconds since the Unix epoch.
    var now: UInt64 { get }
    /// Runs `action` once after `seconds` on the core's executor; the returned token cancels it.
    func schedule(after seconds: Double, _ action: @escaping () -> Void) -> ScheduledTask
}

/// A cancellable scheduled action. Cancelling twice, or after it ran, does nothing.
public protocol ScheduledTask: AnyObject {
    func cancel()
}

/// Converts seconds to whole microseconds (negative and NaN count as zero).
@inline(__always)
func microseconds(_ seconds: Double) -> UInt64 {
    guard seconds.isFinite, seconds > 0 else { return 0 }
    let value = (seconds * 1_000_000).rounded()
    return value >= Double(UInt64.max) ? UInt64.max : UInt64(value)
}

// MARK: - ManualClock

/// A clock for tests: time only moves when `advance(by:)` is called, and the
/// due tasks run then, in time order (ties in the order they were scheduled).
public final class ManualClock: TelephonyClock {
    private final class Task: ScheduledTask {
        let due: UInt64
        let sequence: UInt64
        var action: (() -> Void)?
        init(due: UInt64, sequence: UInt64, action: @escaping () -> Void) {
            self.due = due
            self.sequence = sequence
            self.action = action
        }
        func cancel() { action = nil }
    }

    public private(set) var now: UInt64
    private var tasks: [Task] = []
    private var sequence: UInt64 = 0

    /// `now` in microseconds since the Unix epoch; the default is 2025-01-01T00:00:00Z.
    public init(now: UInt64 = 1_735_689_600_000_000) {
        self.now = now
    }

    /// The number of scheduled tasks that have neither run nor been cancelled.
    public var pendingTaskCount: Int { tasks.count { $0.action != nil } }

    public func schedule(after seconds: Double, _ action: @escaping () -> Void) -> ScheduledTask {
        sequence += 1
        let (due, overflow) = now.addingReportingOverflow(microseconds(seconds))
        let task = Task(due: overflow ? .max : due, sequence: sequence, action: action)
        tasks.append(task)
        return task
    }

    /// Moves time forward by `seconds`, running every task that falls due, each
    /// with `now` set to its due time. Tasks scheduled while advancing run too if
    /// they fall due before the end.
    public func advance(by seconds: Double) {
        let (target, overflow) = now.addingReportingOverflow(microseconds(seconds))
        let end = overflow ? UInt64.max : target
        while true {
            tasks.removeAll { $0.action == nil }
            guard let next = tasks.filter({ $0.due <= end })
                .min(by: { ($0.due, $0.sequence) < ($1.due, $1.sequence) }),
                let action = next.action else { break }
            next.action = nil
            if next.due > now { now = next.due }
            action()
        }
        if end > now { now = end }
    }
}

// MARK: - DispatchClock

/// The real clock: wall time from the system, tasks run on `queue` (the queue
/// that owns the `Switchboard`).
///
/// `@unchecked Sendable`: the clock itself holds only the immutable queue; the
/// scheduled closures are not `Sendable` but they run on `queue`, the executor
/// that owns all the state they touch, which is the contract of `TelephonyClock`.
public final class DispatchClock: TelephonyClock, @unchecked Sendable {
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    public var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000 &+ UInt64(ts.tv_nsec / 1_000)
    }

    private final class Token: ScheduledTask, @unchecked Sendable {
        // Only cancelled on the clock's queue (by the core); `DispatchSource.cancel` is itself thread-safe.
        let timer: DispatchSourceTimer
        private weak var clock: DispatchClock?
        private var finished = false
        init(timer: DispatchSourceTimer, clock: DispatchClock) {
            self.timer = timer
            self.clock = clock
        }
        func cancel() {
            finish()
            timer.cancel()
        }
        /// Fired or cancelled: no longer counted as pending (on the clock's queue).
        func finish() {
            guard !finished else { return }
            finished = true
            clock?.pendingTaskCount -= 1
        }
    }

    /// Timer sources armed and neither fired nor cancelled: none when no call is
    /// in progress, so an idle service arms no timer. Read on `queue`.
    public private(set) var pendingTaskCount = 0

    /// Carries a closure that is not `Sendable` to the queue that owns its state.
    private struct UncheckedAction: @unchecked Sendable {
        let run: () -> Void
    }

    /// A timer source per task rather than `asyncAfter`: a cancelled work item
    /// stays queued, with its closure, until its deadline, and the ring and
    /// action timeouts of every call are cancelled long before theirs (with a
    /// 45 s ring timeout at 400 calls a second, 18,000 of them at any time). A
    /// cancelled source lets go of its handler at once.
    public func schedule(after seconds: Double, _ action: @escaping () -> Void) -> ScheduledTask {
        let box = UncheckedAction(run: action)
        let nanos = microseconds(seconds) > UInt64(Int.max / 1_000) ? Int.max : Int(microseconds(seconds)) * 1_000
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(nanos))
        let token = Token(timer: timer, clock: self)
        pendingTaskCount += 1
        // The handler keeps the timer alive (a caller may drop the token) until it fires or is cancelled.
        timer.setEventHandler { [timer] in
            timer.cancel()
            token.finish()
            box.run()
        }
        timer.resume()
        return token
    }
}
