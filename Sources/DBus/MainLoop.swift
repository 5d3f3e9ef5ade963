import Dispatch
import Glibc
internal import CDBus

/// Drives one libdbus connection from a serial dispatch queue: libdbus tells
/// us which file descriptors and timers to watch (watch and timeout
/// functions), and when messages wait to be dispatched. Nothing polls and no
/// thread blocks in libdbus, so sends from the queue go out at once.
///
/// libdbus calls the add/remove/toggle functions with its lock held, so they
/// only arm or disarm dispatch sources; the work happens in the source
/// handlers, later, on the queue.
///
/// Touched on the queue only (libdbus calls its functions there, where every libdbus call on the
/// connection is made), so it is not `Sendable`: what hands it to the queue says so
/// (`UncheckedSendable`).
final class MainLoop {
    let connection: OpaquePointer
    let queue: DispatchQueue
    private var watches: [OpaquePointer: Watch] = [:]
    private var timers: [OpaquePointer: Timer] = [:]
    private var dispatchScheduled = false
    /// Set on the queue just before the connection is freed: work already
    /// queued must not touch it afterwards.
    private var released = false

    init(connection: OpaquePointer, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    /// Installs the functions; call on the queue.
    func install() {
        dbus_connection_set_watch_functions(connection, { watch, data in
            MainLoop.from(data).addWatch(watch!) ? 1 : 0
        }, { watch, data in
            MainLoop.from(data).removeWatch(watch!)
        }, { watch, data in
            MainLoop.from(data).toggleWatch(watch!)
        }, retained(), MainLoop.release)
        dbus_connection_set_timeout_functions(connection, { timeout, data in
            MainLoop.from(data).addTimer(timeout!)
            return 1
        }, { timeout, data in
            MainLoop.from(data).removeTimer(timeout!)
        }, { timeout, data in
            MainLoop.from(data).toggleTimer(timeout!)
        }, retained(), MainLoop.release)
        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            if status == DBUS_DISPATCH_DATA_REMAINS { MainLoop.from(data).scheduleDispatch() }
        }, retained(), MainLoop.release)

        scheduleDispatch()
    }

    /// The data pointer for one set of callbacks: it keeps this loop alive until libdbus frees it (`release`).
    private func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    private static let release: DBusFreeFunction = { data in Unmanaged<MainLoop>.fromOpaque(data!).release() }

    private static func from(_ data: UnsafeMutableRawPointer?) -> MainLoop {
        Unmanaged<MainLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    // MARK: Dispatching

    func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        let loop = UncheckedSendable(self)
        queue.async { loop.value.dispatchPending() }
    }

    /// Hands every complete incoming message to the filters; on the queue, outside libdbus callbacks.
    func dispatchPending() {
        dispatchPrecondition(condition: .onQueue(queue))
        dispatchScheduled = false
        guard !released else { return }
        while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(connection)
        }
    }

    /// Closes and frees the connection; on the queue.
    func release() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !released else { return }
        dbus_connection_close(connection)
        released = true
        dbus_connection_unref(connection)
    }

    // MARK: Watches

    private final class Watch {
        let watch: OpaquePointer
        var sources: [DispatchSourceProtocol] = []
        /// The descriptor dispatch watches (a duplicate of libdbus's), for asking how much waits unread.
        var descriptor: WatchedDescriptor?
        var running = false
        var removed = false
        init(watch: OpaquePointer) { self.watch = watch }
    }

    /// What dispatch watches instead of libdbus's own socket descriptor: a duplicate, closed once
    /// every source on it has been cancelled. libdbus closes its descriptor right after removing
    /// the watch, but dispatch needs the descriptor it watches open until the cancel handler has
    /// run; closed earlier, a socket opened next under the same number is taken for the old one
    /// (the test process crashed now and then in libdispatch's event loop).
    private final class WatchedDescriptor {
        let fd: Int32
        private var openSources: Int

        init(fd: Int32, sources: Int) {
            self.fd = fd
            self.openSources = sources
        }

        /// From a source's cancel handler, on the queue.
        func sourceCancelled() {
            openSources -= 1
            if openSources == 0 { close(fd) }
        }
    }

    private func addWatch(_ raw: OpaquePointer) -> Bool {
        let watch = Watch(watch: raw)
        let flags = dbus_watch_get_flags(raw)
        let kinds = [DBUS_WATCH_READABLE, DBUS_WATCH_WRITABLE].filter { flags & $0.rawValue != 0 }
        if !kinds.isEmpty {
            let fd = fcntl(dbus_watch_get_unix_fd(raw), F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { return false }
            let descriptor = WatchedDescriptor(fd: fd, sources: kinds.count)
            watch.descriptor = descriptor
            for kind in kinds {
                let source: DispatchSourceProtocol = kind == DBUS_WATCH_READABLE
                    ? DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                    : DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [weak self, watch] in self?.handle(watch, kind.rawValue) }
                source.setCancelHandler { descriptor.sourceCancelled() }
                watch.sources.append(source)
            }
        }
        watches[raw] = watch
        toggleWatch(raw)
        return true
    }

    private func toggleWatch(_ raw: OpaquePointer) {
        guard let watch = watches[raw] else { return }
        let enabled = dbus_watch_get_enabled(raw) != 0
        if enabled && !watch.running {
            watch.sources.forEach { $0.resume() }
            watch.running = true
        } else if !enabled && watch.running {
            watch.sources.forEach { $0.suspend() }
            watch.running = false
        }
    }

    private func removeWatch(_ raw: OpaquePointer) {
        guard let watch = watches.removeValue(forKey: raw) else { return }
        watch.removed = true
        for source in watch.sources {
            source.cancel()
            // A suspended source must be resumed before it is released.
            if !watch.running { source.resume() }
        }
    }

    private func handle(_ watch: Watch, _ flag: UInt32) {
        guard !watch.removed, !released else { return }
        dbus_watch_handle(watch.watch, flag)
        if flag == DBUS_WATCH_READABLE.rawValue { readOn(watch) }
        dispatchPending()
    }

    /// At most this many further reads per readable event: 1 MiB.
    static let readBurst = 256

    /// libdbus reads at most 4 KiB a call (twice its 2 KiB chunk). A big message (33 MB is
    /// allowed) then took 8,000 events, each a wake-up of dispatch's manager thread and a
    /// thread hop to the queue, and every message behind it in the socket (another app's call)
    /// waited for all of them: seconds. While the socket holds more and no message is complete
    /// yet, read on, up to `readBurst` calls; a complete message is dispatched first, in order.
    private func readOn(_ watch: Watch) {
        guard let fd = watch.descriptor?.fd else { return }
        for _ in 0..<Self.readBurst {
            guard !watch.removed, !released, dbus_watch_get_enabled(watch.watch) != 0,
                  dbus_connection_get_dispatch_status(connection) != DBUS_DISPATCH_DATA_REMAINS else { return }
            var waiting: Int32 = 0
            guard ioctl(fd, UInt(FIONREAD), &waiting) == 0, waiting > 0 else { return }
            dbus_watch_handle(watch.watch, DBUS_WATCH_READABLE.rawValue)
        }
    }

    // MARK: Timeouts

    private final class Timer {
        let timeout: OpaquePointer
        var source: DispatchSourceTimer?
        init(timeout: OpaquePointer) { self.timeout = timeout }
    }

    private func addTimer(_ raw: OpaquePointer) {
        timers[raw] = Timer(timeout: raw)
        toggleTimer(raw)
    }

    private func toggleTimer(_ raw: OpaquePointer) {
        guard let timer = timers[raw] else { return }
        timer.source?.cancel()
        timer.source = nil
        guard dbus_timeout_get_enabled(raw) != 0 else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(raw)))
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval, repeating: interval)
        source.setEventHandler { [weak self, timer] in
            guard let self else { return }
            guard !self.released, self.timers[timer.timeout] === timer else { return }
            dbus_timeout_handle(timer.timeout)
            self.dispatchPending()
        }
        timer.source = source
        source.resume()
    }

    /// libdbus timeouts armed now (a pending call's reply timeout repeats until the reply comes); on the queue.
    var armedTimers: Int { timers.values.count { $0.source != nil } }

    private func removeTimer(_ raw: OpaquePointer) {
        timers.removeValue(forKey: raw)?.source?.cancel()
    }
}
