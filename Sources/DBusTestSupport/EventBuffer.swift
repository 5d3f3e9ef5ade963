import Foundation

/// Collects events (signals, log lines) as they arrive and lets a test wait for
/// the next one that matches, with a deadline instead of a sleep.
public final class EventBuffer<Event: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [Event] = []
    private var consumed = 0
    private var waiter: (predicate: (Event) -> Bool, continuation: CheckedContinuation<Event?, Never>)?

    public init() {}

    public func append(_ event: Event) {
        let resume: (CheckedContinuation<Event?, Never>, Event)? = lock.withLock {
            events.append(event)
            guard let waiter, let match = takeMatch(waiter.predicate) else { return nil }
            self.waiter = nil
            return (waiter.continuation, match)
        }
        if let (continuation, match) = resume { continuation.resume(returning: match) }
    }

    /// Every event so far.
    public var all: [Event] { lock.withLock { events } }

    /// The next event after the last one returned that satisfies `predicate`
    /// (events passed over are skipped), or nil at the deadline.
    public func next(timeout: Duration = .seconds(10), where predicate: @escaping (Event) -> Bool = { _ in true }) async -> Event? {
        let deadline = Task { [weak self] in
            // Cancelled when the event came first: then it must not expire a later waiter.
            guard (try? await Task.sleep(for: Deadlines.stretched(timeout))) != nil else { return }
            self?.expire()
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let ready: Event?? = lock.withLock {
                if let match = takeMatch(predicate) { return .some(match) }
                precondition(waiter == nil, "one waiter at a time")
                waiter = (predicate, continuation)
                return .none
            }
            if case .some(let event) = ready { continuation.resume(returning: event) }
        }
    }

    private func expire() {
        let continuation = lock.withLock { () -> CheckedContinuation<Event?, Never>? in
            defer { waiter = nil }
            return waiter?.continuation
        }
        continuation?.resume(returning: nil)
    }

    /// Under the lock: finds the first match after `consumed` and moves past it.
    private func takeMatch(_ predicate: (Event) -> Bool) -> Event? {
        while consumed < events.count {
            let event = events[consumed]
            consumed += 1
            if predicate(event) { return event }
        }
        return nil
    }
}
