import FoundationEssentials
import Synchronization

/// Hands a result made on one thread (a connection's queue, a thread of its own) to the task that
/// awaits it. The result crosses under a lock, which ThreadSanitizer sees: a continuation's resume
/// alone is not always reported to it by this Swift runtime, so the first read of anything the
/// other thread wrote looked like a race (scripts/tsan.supp tells the story).
public enum Handoff {
    /// Calls `start` with a `deliver` function to call once, from any thread, and returns what it delivers.
    public static func value<Value: Sendable>(_ start: (_ deliver: @escaping @Sendable (Result<Value, Error>) -> Void) -> Void) async throws -> Value {
        let box = Box<Value>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            start { result in
                box.put(result)
                continuation.resume()
            }
        }
        return try box.take()
    }

    private final class Box<Value: Sendable>: Sendable {
        private let result = Mutex<Result<Value, Error>?>(nil)

        func put(_ result: Result<Value, Error>) {
            self.result.withLock { $0 = result }
        }

        func take() throws -> Value {
            guard let result = self.result.withLock({ $0 }) else { throw DBusError.failed("nothing was handed over") }
            return try result.get()
        }
    }
}
