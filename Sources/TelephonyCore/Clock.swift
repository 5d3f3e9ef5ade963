import Dispatch
import FoundationEssentials
import Glibc
import HeapModule
internal import CTimerFD

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
/// One timer serves every task: it is armed for the earliest deadline, and only when a task comes
/// due sooner than it is armed for. A source per task cost a source's creation, arming and
/// cancelling three times in every call; now a call's ring and action timeouts mostly cost a heap
/// entry each. Cancelling lets go of the task's closure at once (with a 45 s ring timeout at 400
/// calls a second, 18,000 cancelled timeouts would otherwise hold theirs); the entry leaves the
/// heap when it comes due or when the heap is mostly cancelled entries. With no task pending the
/// timer is disarmed, so an idle service arms no timer.
///
/// The timer is a `timerfd` the clock sets itself, watched by a read source that never changes:
/// setting it is one system call on the queue's thread. A dispatch timer source sent each new
/// deadline to libdispatch's manager thread (a wake-up of that thread, and another as the source
/// was re-armed after running), twice or more in every call's lifecycle (issue 55).
///
/// Not `Sendable`: it belongs to whoever owns the switchboard, and `queue` must be that owner's
/// executor (the timer's handler runs there; Dispatch cannot say so to the compiler).
public final class DispatchClock: TelephonyClock {
    public let queue: DispatchQueue
    /// CLOCK_MONOTONIC, set to absolute deadlines.
    private let timerFD: Int32
    /// Fires when the timer expires; registered once, never changed.
    private let expiry: DispatchSourceRead
    /// Every task scheduled and not yet taken off, cancelled ones included.
    private var tasks = Heap<Entry>()
    /// The deadline the timer is armed for (`monotonicNanoseconds`), nil when disarmed.
    private var armedFor: UInt64?
    private var sequence: UInt64 = 0

    /// Tasks neither run nor cancelled: none when no call is in progress, and then the timer is
    /// disarmed. Read on `queue`.
    public private(set) var pendingTaskCount = 0

    public init(queue: DispatchQueue) {
        self.queue = queue
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        precondition(fd >= 0, "timerfd_create failed: errno \(errno)")
        timerFD = fd
        expiry = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        expiry.setEventHandler { [weak self] in
            var expirations: UInt64 = 0
            _ = read(fd, &expirations, MemoryLayout<UInt64>.size)
            self?.runDueTasks()
        }
        expiry.setCancelHandler { close(fd) }
        expiry.resume()
    }

    deinit { expiry.cancel() }

    /// CLOCK_MONOTONIC in nanoseconds: the timer's clock.
    private static var monotonicNanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    public var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000 &+ UInt64(ts.tv_nsec / 1_000)
    }

    private final class Token: ScheduledTask {
        let deadline: UInt64
        /// Scheduled, and neither run nor cancelled. Only touched on the clock's queue.
        var action: (() -> Void)?
        private weak var clock: DispatchClock?

        init(deadline: UInt64, action: @escaping () -> Void, clock: DispatchClock) {
            self.deadline = deadline
            self.action = action
            self.clock = clock
        }

        /// On the clock's queue (the core cancels there).
        func cancel() {
            guard action != nil else { return }
            action = nil
            clock?.taskCancelled()
        }
    }

    /// A heap entry: earliest deadline first, ties in the order they were scheduled.
    private struct Entry: Comparable {
        let token: Token
        let sequence: UInt64
        static func < (a: Entry, b: Entry) -> Bool { (a.token.deadline, a.sequence) < (b.token.deadline, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { a.sequence == b.sequence }
    }

    /// On `queue`.
    public func schedule(after seconds: Double, _ action: @escaping () -> Void) -> ScheduledTask {
        let delay = min(microseconds(seconds), UInt64(Int64.max / 1_000)) * 1_000
        let (sum, overflow) = Self.monotonicNanoseconds.addingReportingOverflow(delay)
        let token = Token(deadline: overflow ? UInt64.max : sum, action: action, clock: self)
        sequence += 1
        tasks.insert(Entry(token: token, sequence: sequence))
        pendingTaskCount += 1
        if armedFor.map({ token.deadline < $0 }) ?? true { arm(token.deadline) }
        return token
    }

    private func taskCancelled() {
        pendingTaskCount -= 1
        if pendingTaskCount == 0 {
            // Nothing left to run: no timer armed while the service idles.
            tasks = Heap()
            disarm()
        } else if tasks.count > 64, tasks.count > 2 * pendingTaskCount {
            // Mostly cancelled entries: keep the live ones (the timer stays armed as it is).
            tasks = Heap(tasks.unordered.filter { $0.token.action != nil })
        }
    }

    /// The timer fired: runs every task due by now, in order, then arms for the next.
    private func runDueTasks() {
        armedFor = nil
        let now = Self.monotonicNanoseconds
        while let first = tasks.min, first.token.deadline <= now {
            tasks.removeMin()
            guard let action = first.token.action else { continue }
            first.token.action = nil
            pendingTaskCount -= 1
            action()
        }
        // Cancelled entries at the front would only wake the timer for nothing.
        while let first = tasks.min, first.token.action == nil { tasks.removeMin() }
        if let next = tasks.min { arm(next.token.deadline) } else { disarm() }
    }

    private func arm(_ deadline: UInt64) {
        guard armedFor != deadline else { return }
        armedFor = deadline
        // A deadline past time_t's range stays armed for its largest.
        let seconds = min(deadline / 1_000_000_000, UInt64(Int.max))
        set(itimerspec(it_interval: timespec(), it_value: timespec(tv_sec: Int(seconds), tv_nsec: Int(deadline % 1_000_000_000))))
    }

    private func disarm() {
        guard armedFor != nil else { return }
        armedFor = nil
        set(itimerspec())  // a zero value disarms
    }

    private func set(_ value: itimerspec) {
        var value = value
        // Fails only for a bad descriptor or value, neither of which can happen here.
        let result = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &value, nil)
        assert(result == 0, "timerfd_settime failed: errno \(errno)")
    }
}
