import Glibc

/// A thread of its own for work that blocks for a long time (a socket read, a child's exit), so
/// that it never holds one of Dispatch's pool threads. What Foundation's `Thread.detachNewThread`
/// does, without Foundation's code and ICU in the program.
public enum DetachedThread {
    /// Runs `body` on a new detached thread; false when the system has no thread to give.
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
