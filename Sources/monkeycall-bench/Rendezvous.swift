import Foundation

/// Where the signal handlers (which learn that something happened) meet the
/// lifecycles (which wait for it), by key. Either side may come first. A wait
/// that outlasts its deadline throws, and after `fail` every wait throws, so a
/// lost signal or a broken provider ends the benchmark instead of hanging it.
final class Rendezvous: @unchecked Sendable {
    private typealias Waiter = (deadline: ContinuousClock.Instant, continuation: CheckedContinuation<Void, Error>)

    private let lock = NSLock()
    private var arrived: Set<String> = []
    private var waiting: [String: Waiter] = [:]
    private var failure: BenchError?
    private var watchdog: Task<Void, Never>?

    init() {
        // One periodic sweep instead of a timer task per wait, which would cost
        // as much as the round trips being measured.
        watchdog = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self else { return }
                self.expireOverdue()
            }
        }
    }

    deinit { watchdog?.cancel() }

    func signal(_ key: String) {
        let continuation: CheckedContinuation<Void, Error>? = lock.withLock {
            if let waiter = waiting.removeValue(forKey: key) { return waiter.continuation }
            arrived.insert(key)
            return nil
        }
        continuation?.resume()
    }

    func wait(_ key: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let ready: Result<Void, Error>? = lock.withLock {
                if let failure { return .failure(failure) }
                if arrived.remove(key) != nil { return .success(()) }
                waiting[key] = (deadline, continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Fails every wait, now and later, with `error` (the first one given wins).
    func fail(_ error: BenchError) {
        let (reason, waiters): (BenchError, [Waiter]) = lock.withLock {
            let reason = failure ?? error
            failure = reason
            defer { waiting.removeAll() }
            return (reason, Array(waiting.values))
        }
        waiters.forEach { $0.continuation.resume(throwing: reason) }
    }

    private func expireOverdue() {
        let now = ContinuousClock.now
        let overdue: [(String, Waiter)] = lock.withLock {
            let expired = waiting.filter { $0.value.deadline <= now }
            for key in expired.keys { waiting[key] = nil }
            return expired.map { ($0.key, $0.value) }
        }
        for (key, waiter) in overdue {
            waiter.continuation.resume(throwing: BenchError("timed out waiting for \(key)"))
        }
    }
}
