import CBoundary
internal import CGLib
import FoundationEssentials
import Synchronization

/// A GLib main loop on a thread of its own. libnotify (GDBus underneath)
/// delivers its signals in the main context where its proxy was made, and
/// GSettings its change notifications likewise, so every libnotify and
/// GSettings call is made here, through `perform`; the ringtone's libcanberra
/// calls too. One thread for all of them: no dispatch queue (whose workers would
/// wake libdispatch's monitor every second for good), no thread per library.
///
/// What lives on the thread (a notifier's notifications, the ringer's libcanberra context) is
/// kept in a `LoopBound`, which only hands it out there.
public final class GLibLoop: Sendable {
    /// The one loop of the process: notifications and desktop settings share its thread.
    public static let shared = GLibLoop(name: "glib")

    /// The loop's `GMainContext`. Only the calls GLib documents as safe from any thread are made
    /// on it (`g_main_context_invoke_full`, `g_source_attach`), and it lives as long as the
    /// process: shared freely.
    fileprivate let context: UncheckedSendable<OpaquePointer>

    init(name: String) {
        let context = g_main_context_new()
        let loop = g_main_loop_new(context, 0)
        self.context = UncheckedSendable(context!)
        // A GLib thread rather than Foundation's: GLib names it (Thread.name is not applied on
        // Linux to a thread started from a dispatch worker, which shows as "…root.default-qos").
        // The loop runs for as long as the process does: the thread keeps it.
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
    fileprivate static let handOver = Mutex(())

    /// Runs `work` on the loop's thread, in order.
    public func perform(_ work: @escaping () -> Void) {
        Self.handOver.withLock { _ in }
        g_main_context_invoke_full(context.value, 0, WorkBox.run, Unmanaged.passRetained(WorkBox(work)).toOpaque(), WorkBox.release)
    }

    /// Runs `work` on the loop's thread once `milliseconds` have passed (a GLib timeout: no wake-up
    /// before then, none after).
    public func perform(afterMilliseconds milliseconds: UInt32, _ work: @escaping () -> Void) {
        Self.handOver.withLock { _ in }
        let source = g_timeout_source_new(milliseconds)
        g_source_set_callback(source, WorkBox.run, Unmanaged.passRetained(WorkBox(work)).toOpaque(), WorkBox.release)
        g_source_attach(source, context.value)
        g_source_unref(source)
    }
}

/// Work on its way to a loop's thread, as GLib carries it: retained until GLib releases it, run
/// once there (`run`, which returns `G_SOURCE_REMOVE`).
private final class WorkBox {
    let work: () -> Void
    init(_ work: @escaping () -> Void) { self.work = work }

    static let run: GSourceFunc = { data in
        GLibLoop.handOver.withLock { _ in }
        Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().work()
        return 0 // G_SOURCE_REMOVE
    }
    static let release: GDestroyNotify = { data in Unmanaged<WorkBox>.fromOpaque(data!).release() }
}

/// An object that lives on a GLib loop's thread: made anywhere, then touched only there, in
/// order, through `perform`. What a C library wants kept on its thread (libnotify's
/// notifications, GSettings, a libcanberra context) goes in one, and the type that holds it is
/// `Sendable` as the compiler checks it.
///
/// The compiler cannot see the confinement: `Value` is not `Sendable`, and `value` shares it
/// because every `perform` runs its work on the one loop thread. `Value` is taken (`sending`) and
/// never handed out but to that work; the work itself is `@Sendable`, so that it carries nothing
/// else of the caller's over.
public final class LoopBound<Value: AnyObject>: Sendable {
    public let loop: GLibLoop
    private let value: UncheckedSendable<Value>

    public init(_ value: sending Value, on loop: GLibLoop = .shared) {
        self.value = UncheckedSendable(value)
        self.loop = loop
    }

    /// Runs `work` with the value on the loop's thread, in order: handed to GLib here, as
    /// `GLibLoop.perform` hands its work (the same box and callbacks), one step from the caller.
    public func perform(_ work: @escaping @Sendable (Value) -> Void) {
        let value = value
        GLibLoop.handOver.withLock { _ in }
        g_main_context_invoke_full(loop.context.value, 0, WorkBox.run, Unmanaged.passRetained(WorkBox { work(value.value) }).toOpaque(), WorkBox.release)
    }
}
