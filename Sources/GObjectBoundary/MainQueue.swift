import CGtk
import Dispatch
import Glibc

@_silgen_name("_dispatch_get_main_queue_handle_4CF")
private func dispatchMainQueueHandle() -> Int32
@_silgen_name("_dispatch_main_queue_callback_4CF")
private func dispatchMainQueueCallback(_ message: UnsafeMutableRawPointer?)

/// Swift's main actor inside GTK's main loop.
///
/// `g_application_run` owns the main thread, so the main dispatch queue, where Swift's main actor
/// runs its jobs, is never drained on its own: a `Task { @MainActor in … }` or an `await` that
/// resumes on the main actor would wait forever. libdispatch tells a run loop that the main
/// queue has work through an eventfd (what Foundation's `RunLoop` watches on Linux); this watches
/// the same descriptor from the GLib main context and drains the queue when it fires. Nothing
/// polls: with no work the descriptor stays quiet and the process sleeps in `poll`.
public enum MainQueue {
    /// Call once on the main thread, before the GLib loop runs.
    public static func attachToGLib() {
        let handle = dispatchMainQueueHandle()
        guard handle >= 0 else { return }
        _ = fcntl(handle, F_SETFL, fcntl(handle, F_GETFL) | O_NONBLOCK)
        g_unix_fd_add_full(G_PRIORITY_DEFAULT, handle, G_IO_IN, { fd, _, _ in
            var value: UInt64 = 0
            _ = read(fd, &value, 8)
            dispatchMainQueueCallback(nil)
            return 1 // G_SOURCE_CONTINUE
        }, nil, nil)
    }
}
