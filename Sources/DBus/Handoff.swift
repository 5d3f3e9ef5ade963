import Foundation

/// Hands a result made on one thread (a connection's queue, a thread of its own) to the task that
/// awaits it. The result crosses under a lock, which ThreadSanitizer sees: a continuation's resume
/// alone is not always reported to it by this Swift runtime, so the first read of anything the
/// other thread wrote looked like a race (scripts/tsan.supp tells the story).
public enum Handoff {
    /// Calls `start` with a `deliver` function to call once, from any thread, and returns what it delivers.
    public static func value<Value>(_ start: (_ deliver: @escaping @Sendable (Result<Value, Error>) -> Void) -> Void) async throws -> Value {
        let box = Box<Value>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            start { result in
                box.put(result)
                continuation.resume()
            }
        }
        return try box.take()
    }

    private final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<Value, Error>?

        func put(_ result: Result<Value, Error>) {
            lock.withLock { self.result = result }
        }

        func take() throws -> Value {
            guard let result = lock.withLock({ self.result }) else { throw DBusError.failed("nothing was handed over") }
            return try result.get()
        }
    }
}
