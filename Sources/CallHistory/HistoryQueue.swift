import Dispatch
import QueueExecutor
import Synchronization

/// The database's own executor: every use of a `CallHistory` runs on one
/// serial queue, never on its callers', and each result is handed to a
/// completion on the queue the caller named (`delivery`), in the order the
/// work was submitted.
///
/// Writes run in the order they were submitted. A write that finds the
/// database busy or locked (another process holds a lock: a backup tool,
/// `sqlite3` open in a terminal) stays at the head of the line and is tried
/// again with backoff (`firstBackoff` doubling up to `maximumBackoff`); the
/// writes behind it wait their turn, so none overtakes another, and between
/// tries the queue is free for reads.
/// - An `.entry` write (a call for Recents) is tried until it succeeds, for
///   as long as the process runs. At most `capacity` entries wait; when one
///   more comes, the oldest waiting is dropped: its completion gets
///   `EntryDropped` with the number dropped so far. The newest calls are the
///   ones a user looks for, and memory stays bounded however long the lock is
///   held (10,000 entries are a few MB).
/// - A `.request` write (a user's Delete, Clear, Favorites.Add…) is tried for
///   `patience` seconds, then fails with the busy error: someone waits for
///   its answer. It counts against no bound: it gives up on its own.
/// - A read runs as soon as the queue is free, not behind waiting writes
///   (in WAL mode a writer's lock does not stop readers). It sees every write
///   submitted before it that did not have to wait. A read that finds the
///   database busy is tried again like a request.
///
/// Errors other than busy or locked (a read-only or full disk, a corrupt
/// file) are not retried: the completion gets them at once.
///
/// The line is the actor's state, and the actor's executor is the database's queue: the
/// methods callers use submit work to the queue without waiting, and the work enters the
/// actor there.
public actor HistoryQueue {
    public enum Kind: Sendable {
        /// Tried until it succeeds; bounded by `capacity`.
        case entry
        /// Tried for `patience` seconds.
        case request
    }

    /// An entry dropped at the bound. `total`: entries dropped since the queue was made.
    public struct EntryDropped: Error, CustomStringConvertible {
        public let total: Int
        public var description: String { "dropped after waiting for the database lock (\(total) entries dropped so far)" }
    }

    public nonisolated let history: CallHistory
    public nonisolated let capacity: Int
    public nonisolated let patience: Double
    public nonisolated let firstBackoff: Double
    public nonisolated let maximumBackoff: Double

    private let executor = QueueExecutor(queue: DispatchQueue(label: "org.monkeycall.history", qos: .utility))
    private let delivery: DispatchQueue
    private let onWaiting: @Sendable (_ waiting: Bool) -> Void

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Writes submitted plus writes ended (done or failed): while it reads the same, the database
    /// holds what it held (`writeCount`).
    private nonisolated let writes = Atomic<UInt64>(0)

    private var line: [Job] = []
    private var entriesWaiting = 0
    private var dropped = 0
    private var retryScheduled = false
    private var backoff: Double
    private var lastBusy: (any Error)?
    private var waiting = false

    /// `onWaiting` is told (on `delivery`) when writes start waiting for a lock, and when they stop.
    public init(history: CallHistory, delivery: DispatchQueue, capacity: Int = 10_000, patience: Double = 2,
                firstBackoff: Double = 0.01, maximumBackoff: Double = 0.2,
                onWaiting: @escaping @Sendable (_ waiting: Bool) -> Void = { _ in }) {
        precondition(capacity > 0 && patience >= 0 && firstBackoff > 0 && maximumBackoff >= firstBackoff)
        self.history = history
        self.delivery = delivery
        self.capacity = capacity
        self.patience = patience
        self.firstBackoff = firstBackoff
        self.maximumBackoff = maximumBackoff
        self.backoff = firstBackoff
        self.onWaiting = onWaiting
    }

    /// Counts each write when it is submitted and again when it ends: a result read between two
    /// equal counts is still what the database holds (a write waiting for a lock counts as
    /// changing it until it ends). For what is kept of a read (`Recents.List`'s last page).
    public nonisolated var writeCount: UInt64 { writes.load(ordering: .acquiring) }

    /// A write, in line behind the writes submitted before it.
    public nonisolated func write<T: Sendable>(_ kind: Kind, _ body: @escaping @Sendable (CallHistory) throws -> T,
                                               then completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let delivery = self.delivery
        writes.add(1, ordering: .releasing)
        executor.async(on: self) { line in
            let job = Job(kind: kind, deadline: .now() + line.patience, run: { history in
                let value = try body(history)
                line.writes.add(1, ordering: .releasing)
                delivery.async { completion(.success(value)) }
            }, fail: { error in
                line.writes.add(1, ordering: .releasing)
                delivery.async { completion(.failure(error)) }
            })
            line.submit(job)
        }
    }

    /// A read, as soon as the queue is free. `completingHere`: the completion runs on the
    /// database's queue instead of `delivery`, for a result that needs nothing of the caller's
    /// (a large reply, encoded and sent as it is).
    public nonisolated func read<T: Sendable>(_ body: @escaping @Sendable (CallHistory) throws -> T, completingHere: Bool = false,
                                              then completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let delivery = completingHere ? nil : self.delivery
        executor.async(on: self) { line in
            line.attemptRead(body, deadline: .now() + line.patience, delay: line.firstBackoff) { result in
                if let delivery { delivery.async { completion(result) } } else { completion(result) }
            }
        }
    }

    private func attemptRead<T: Sendable>(_ body: @escaping @Sendable (CallHistory) throws -> T, deadline: DispatchTime, delay: Double,
                                          then completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        do {
            completion(.success(try body(history)))
        } catch where Self.isBusy(error) && DispatchTime.now() < deadline {
            executor.async(on: self, after: delay) { line in
                line.attemptRead(body, deadline: deadline, delay: min(delay * 2, line.maximumBackoff), then: completion)
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// A read for whoever can wait (start-up): the same as `read`, awaited.
    public nonisolated func read<T: Sendable>(_ body: @escaping @Sendable (CallHistory) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            read(body) { continuation.resume(with: $0) }
        }
    }

    /// Writes waiting for a lock: entries and requests.
    public func waitingCount() -> Int { line.count }

    /// Waits until no write is left, or `timeout` seconds have passed; returns how many are left.
    public nonisolated func settle(timeout: Double) async -> Int {
        let deadline = DispatchTime.now() + timeout
        return await withCheckedContinuation { continuation in
            executor.async(on: self) { line in line.check(until: deadline, continuation) }
        }
    }

    private func check(until deadline: DispatchTime, _ continuation: CheckedContinuation<Int, Never>) {
        guard line.isEmpty || DispatchTime.now() >= deadline else {
            return executor.async(on: self, after: firstBackoff) { line in line.check(until: deadline, continuation) }
        }
        continuation.resume(returning: line.count)
    }

    /// Whether SQLite refused for another connection's lock: worth trying again.
    public nonisolated static func isBusy(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.isBusy ?? false
    }

    // MARK: The line

    private final class Job {
        let kind: Kind
        let deadline: DispatchTime
        let run: (CallHistory) throws -> Void
        let fail: (any Error) -> Void
        init(kind: Kind, deadline: DispatchTime, run: @escaping (CallHistory) throws -> Void, fail: @escaping (any Error) -> Void) {
            self.kind = kind
            self.deadline = deadline
            self.run = run
            self.fail = fail
        }
    }

    private func submit(_ job: Job) {
        if job.kind == .entry {
            if entriesWaiting >= capacity, let oldest = line.firstIndex(where: { $0.kind == .entry }) {
                let dropped = line.remove(at: oldest)
                entriesWaiting -= 1
                self.dropped += 1
                dropped.fail(EntryDropped(total: self.dropped))
            }
            entriesWaiting += 1
        }
        line.append(job)
        // Behind a write that waits for a lock: its turn comes at the next try.
        if !retryScheduled { drain() }
    }

    private func drain() {
        while let job = line.first {
            do {
                try job.run(history)
                finish(job)
            } catch where Self.isBusy(error) {
                lastBusy = error
                expireRequests()
                guard line.first === job else { continue } // it gave up: the next one's turn
                if !waiting {
                    waiting = true
                    let onWaiting = self.onWaiting
                    delivery.async { onWaiting(true) }
                }
                retryScheduled = true
                executor.async(on: self, after: backoff) { line in
                    line.retryScheduled = false
                    line.drain()
                }
                backoff = min(backoff * 2, maximumBackoff)
                return
            } catch {
                finish(job)
                job.fail(error)
            }
        }
        backoff = firstBackoff
        if waiting {
            waiting = false
            let onWaiting = self.onWaiting
            delivery.async { onWaiting(false) }
        }
    }

    private func finish(_ job: Job) {
        line.removeFirst()
        if job.kind == .entry { entriesWaiting -= 1 }
    }

    /// Requests that have waited `patience` for the lock give up, wherever they are in the line.
    private func expireRequests() {
        let now = DispatchTime.now()
        let error = lastBusy ?? SQLiteError(code: 5 /* SQLITE_BUSY */, message: "database is locked")
        line.removeAll { job in
            guard job.kind == .request, job.deadline <= now else { return false }
            job.fail(error)
            return true
        }
    }
}
