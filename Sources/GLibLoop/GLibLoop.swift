internal import CGLib
import FoundationEssentials
import Synchronization

/// A GLib main loop on a thread of its own. libnotify (GDBus underneath)
/// delivers its signals in the main context where its proxy was made, and
/// GSettings its change notifications likewise, so every libnotify and
/// GSettings call is made here, through `perform`; the ringtone's libcanberra
/// calls too. One thread for all of them: no dispatch queue (whose workers would
/// wake libdispatch's monitor every second for good), no thread per library.
public final class GLibLoop: @unchecked Sendable {
    /// The one loop of the process: notifications and desktop settings share its thread.
    public static let shared = GLibLoop(name: "glib")

    private let context: OpaquePointer
    private let loop: OpaquePointer

    init(name: String) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        // A GLib thread rather than Foundation's: GLib names it (Thread.name is not applied on
        // Linux to a thread started from a dispatch worker, which shows as "…root.default-qos").
        let thread = g_thread_new(name, { data in
            let loop = OpaquePointer(data!)
            g_main_context_push_thread_default(g_main_loop_get_context(loop))
            g_main_loop_run(loop)
            return nil
        }, UnsafeMutableRawPointer(loop))
        g_thread_unref(thread)
    }

    /// GLib hands `work` to its thread under locks of its own, futexes that
    /// ThreadSanitizer does not see. Taking this one on both sides as well shows it
    /// what is so: all the caller did before `perform` happens before `work` runs.
    private static let handOver = Mutex(())

    /// Runs `work` on the loop's thread, in order.
    public func perform(_ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
        Self.handOver.withLock { _ in }
        g_main_context_invoke_full(context, 0, { data in
            GLibLoop.handOver.withLock { _ in }
            Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().work()
            return 0 // G_SOURCE_REMOVE
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
    }

    /// Runs `work` on the loop's thread once `milliseconds` have passed (a GLib timeout: no wake-up
    /// before then, none after).
    public func perform(afterMilliseconds milliseconds: UInt32, _ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
        Self.handOver.withLock { _ in }
        let source = g_timeout_source_new(milliseconds)
        g_source_set_callback(source, { data in
            GLibLoop.handOver.withLock { _ in }
            Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().work()
            return 0 // G_SOURCE_REMOVE
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    private final class WorkBox {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }
}
