import CGtk

/// GLib timeouts running Swift closures on the main thread; nothing repeats unless asked to.
@MainActor
public enum Timeout {
    private final class Box {
        let body: @MainActor () -> Bool
        init(_ body: @escaping @MainActor () -> Bool) { self.body = body }
    }

    /// Runs `body` every `milliseconds` while it returns true; the source id, for `cancel`.
    @discardableResult
    public static func every(milliseconds: UInt32, _ body: @escaping @MainActor () -> Bool) -> UInt32 {
        let data = Unmanaged.passRetained(Box(body)).toOpaque()
        return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, { data in
            let box = Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue()
            return MainActor.assumeIsolated { box.body() } ? 1 : 0
        }, data, { data in Unmanaged<Box>.fromOpaque(data!).release() })
    }

    /// Runs `body` once after `milliseconds`.
    @discardableResult
    public static func after(milliseconds: UInt32, _ body: @escaping @MainActor () -> Void) -> UInt32 {
        every(milliseconds: milliseconds) {
            body()
            return false
        }
    }

    public static func cancel(_ id: UInt32) {
        if id != 0 { g_source_remove(id) }
    }
}
