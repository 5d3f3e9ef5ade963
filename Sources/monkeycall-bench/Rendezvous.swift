import Foundation
import Synchronization

/// Where the signal handlers (which learn that something happened) meet the
/// lifecycles (which wait for it), by key. Either side may come first. A wait
/// that outlasts its deadline throws, and after `fail` every wait throws, so a
/// lost signal or a broken provider ends the benchmark instead of hanging it.
final class Rendezvous: Sendable {
    private typealias Waiter = (deadline: ContinuousClock.Instant, continuation: CheckedContinuation<Void, Error>)

    private struct State {
        var arrived: Set<String> = []
        var waiting: [String: Waiter] = [:]
        var failure: BenchError?
        var watchdog: Task<Void, Never>?
    }

    private let state = Mutex(State())

    init() {
        // One periodic sweep instead of a timer task per wait, which would cost
        // as much as the round trips being measured.
        let watchdog = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self else { return }
                self.expireOverdue()
            }
        }
        state.withLock { $0.watchdog = watchdog }
    }

    deinit { state.withLock { $0.watchdog }?.cancel() }

    func signal(_ key: String) {
        let continuation: CheckedContinuation<Void, Error>? = state.withLock {
            if let waiter = $0.waiting.removeValue(forKey: key) { return waiter.continuation }
            $0.arrived.insert(key)
            return nil
        }
        continuation?.resume()
    }

    func wait(_ key: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let ready: Result<Void, Error>? = state.withLock {
                if let failure = $0.failure { return .failure(failure) }
                if $0.arrived.remove(key) != nil { return .success(()) }
                $0.waiting[key] = (deadline, continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Fails every wait, now and later, with `error` (the first one given wins).
    func fail(_ error: BenchError) {
        let (reason, waiters): (BenchError, [Waiter]) = state.withLock { state in
            let reason = state.failure ?? error
            state.failure = reason
            defer { state.waiting.removeAll() }
            return (reason, Array(state.waiting.values))
        }
        waiters.forEach { $0.continuation.resume(throwing: reason) }
    }

    private func expireOverdue() {
        let now = ContinuousClock.now
        let overdue: [(String, Waiter)] = state.withLock { state in
            let expired = state.waiting.filter { $0.value.deadline <= now }
            for key in expired.keys { state.waiting[key] = nil }
            return expired.map { ($0.key, $0.value) }
        }
        for (key, waiter) in overdue {
            waiter.continuation.resume(throwing: BenchError("timed out waiting for \(key)"))
        }
    }
}
