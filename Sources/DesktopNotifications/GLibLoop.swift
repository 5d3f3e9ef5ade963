import CLibnotify
import Foundation

/// A GLib main loop on a thread of its own. libnotify (GDBus underneath)
/// delivers its signals in the main context where its proxy was made, and
/// GSettings its change notifications likewise, so every libnotify and
/// GSettings call is made here, through `perform`.
final class GLibLoop: @unchecked Sendable {
    /// The one loop of the process: notifications and desktop settings share its thread.
    static let shared = GLibLoop(name: "glib")

    private let context: OpaquePointer
    private let loop: OpaquePointer

    init(name: String) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        let context = UncheckedPointer(self.context), loop = UncheckedPointer(self.loop)
        let thread = Thread {
            g_main_context_push_thread_default(context.pointer)
            g_main_loop_run(loop.pointer)
        }
        thread.name = name
        thread.start()
    }

    /// GLib hands `work` to its thread under locks of its own, futexes that
    /// ThreadSanitizer does not see. Taking this one on both sides as well shows it
    /// what is so: all the caller did before `perform` happens before `work` runs.
    private static let handOver = NSLock()

    /// Runs `work` on the loop's thread, in order.
    func perform(_ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
        Self.handOver.withLock {}
        g_main_context_invoke_full(context, 0, { data in
            GLibLoop.handOver.withLock {}
            Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().work()
            return 0 // G_SOURCE_REMOVE
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
    }

    private final class WorkBox {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }
}

struct UncheckedPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
