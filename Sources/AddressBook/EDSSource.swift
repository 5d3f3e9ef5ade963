import Dispatch
import FoundationEssentials
import Logging
import ProcessSpawn
import QueueExecutor
#if canImport(Glibc)
import Glibc
#endif

/// GNOME's address books (evolution-data-server), read by the `monkeycall-contacts` helper.
///
/// Why a helper process and not libebook in the daemon, measured on Debian 12 (EDS 3.46,
/// a C program, docs/performance.md "The address book"): a process with GIO and a session bus
/// connection is 5.2 MiB; linked with libebook, before any call, 15.7 MiB (the loader maps
/// libedataserver, libphonenumber, ICU, libsoup, libxml2, libsecret…); with the registry open
/// and a view of 1,000 contacts read, 21.1 MiB. monkeycalld idles at 22.9 MiB against a goal of
/// 24, so even a `dlopen` on the first address-book source (and Debian always has one, the
/// built-in "Personal") would take it to about 39 MiB. The helper holds libebook, the daemon
/// holds only the index. The helper is started only where EDS is installed, and idles without
/// a wake-up, as the daemon does.
///
/// The helper's lines (see Sources/monkeycall-contacts/main.c) are read from a pipe on a
/// `DispatchSource`, on the address book's queue; numbers are normalised here, with the same
/// `ContactNumbering` as the vCard folders. Its standard error comes through a pipe too, into the
/// daemon's log. When the helper ends unexpectedly, what it gave is dropped and it is started
/// again after a pause (`HelperRestarts`: 1 s, doubling up to a minute; a one-shot timer that
/// exists only while the helper is down). A helper that cannot load its libraries (exit status
/// 127, the loader's "error while loading shared libraries") is said once to need libebook's
/// package, and is not started again until its file changes (inotify on its folder: nothing
/// wakes meanwhile).
///
/// The helper's end is learnt from `waitid` on a thread of its own, never from its pipes' end:
/// the daemon keeps their write ends open until their sources are cancelled, so libdispatch never
/// sees a hang-up on them. On Linux a hang-up (EPOLLHUP) makes libdispatch delete the source's
/// registration on the source's own queue while its manager thread may still be reading the
/// registration, and a helper that exited at each start crashed the release daemon that way
/// (issue 53; docs/child-processes.md). Every descriptor here is closed by the cancel handler of
/// the source that watches it, after `cancel()`, never before.
actor EDSSource {
    private let helper: String
    private let environment: [String: String]
    private let restarts: HelperRestarts
    private let context: ContactSourceContext

    nonisolated var unownedExecutor: UnownedSerialExecutor { context.executor.asUnownedSerialExecutor() }

    /// The helper while it runs (from its start until its end is seen here, or `stop`).
    private struct Run {
        let generation: Int
        let pid: pid_t
        let file: HelperFile?
        let startedAt: DispatchTime
        /// Its stdin, stdout and stderr: the daemon's ends of its pipes.
        let streams: HelperStreams
        /// It wrote a line longer than `maximumLine`: it is being killed, its output is ignored.
        var discarded = false
    }

    private var run: Run?
    private var generation = 0
    private var pending: [UInt8] = []
    private var pendingErrors: [UInt8] = []
    /// The loader's line on the helper's stderr in this run ("error while loading shared libraries…").
    private var loaderError: String?
    private var sources: Set<String> = []
    private var stopped = true
    private var pause: Double
    private var restart: DispatchWorkItem?
    /// The helper's folder, watched while the helper is not started again until its file changes.
    private var fileWatch: DispatchSourceRead?
    /// The helper file that could not run (nil: it was missing).
    private var unusableFile: HelperFile?

    /// Longest line read from the helper: a contact's line is a few hundred bytes; past this the
    /// helper is taken for broken (it would otherwise grow `pending` without end) and killed.
    static let maximumLine = 1 << 20
    /// Longest line of the helper's stderr logged as it is.
    static let maximumErrorLine = 4096

    init(helper: String, environment: [String: String], restarts: HelperRestarts = .standard, context: ContactSourceContext) {
        self.helper = helper
        self.environment = environment
        self.restarts = restarts
        self.context = context
        pause = restarts.first
    }

    /// Whether evolution-data-server is installed: its registry's D-Bus service file is in a
    /// `dbus-1/services` folder of `$XDG_DATA_HOME` or `$XDG_DATA_DIRS`.
    static func isInstalled(environment: [String: String]) -> Bool {
        var folders = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        if let home = environment["XDG_DATA_HOME"] ?? environment["HOME"].map({ $0 + "/.local/share" }) { folders.insert(home, at: 0) }
        return folders.contains { access($0 + "/dbus-1/services/org.gnome.evolution.dataserver.Sources5.service", R_OK) == 0 }
    }

    func start() {
        stopped = false
        launch()
    }

    /// The helper is told to go (its stdin ends, SIGTERM) and what it gave stays until the index is dropped.
    func stop() {
        stopped = true
        restart?.cancel()
        restart = nil
        stopWatchingFile()
        guard let run else { return }
        end(run)
        // Not yet reaped (the thread that waits for it only reaps it on the queue): the pid is its own.
        kill(run.pid, SIGTERM)
    }

    // MARK: Starting

    private func launch() {
        guard !stopped, run == nil else { return }
        let file = HelperFile(path: helper)
        // Close-on-exec: a program the daemon starts meanwhile (an app, gio launch) must not keep the
        // helper's pipes open, or the helper would outlive the daemon.
        let pipes: [Spawn.Pipe]
        switch Spawn.pipes(3) {
        case .success(let made): pipes = made
        case .failure(let error): return failed("pipe: \(error)")
        }
        let (input, output, errors) = (pipes[0], pipes[1], pipes[2])
        let started = Spawn.start([helper], environment: environment, files: [
            .duplicate(input.read, as: 0), .duplicate(output.write, as: 1), .duplicate(errors.write, as: 2),
            .close(input.read), .close(output.write), .close(errors.write),
        ])
        close(input.read)
        let child: pid_t
        switch started {
        case .success(let pid): child = pid
        case .failure(let error):
            for fd in [input.write, output.read, output.write, errors.read, errors.write] { close(fd) }
            return cannotStart(error, file: file)
        }
        generation += 1
        let generation = generation
        // The write ends of its stdout and stderr stay open here, closed by the sources' cancel
        // handlers: the pipes never hang up while they are watched (see the type's comment).
        let streams = HelperStreams(input: input.write, output: watch(output) { $0.readOutput(generation) },
                                    errors: watch(errors) { $0.readErrors(generation) })
        run = Run(generation: generation, pid: child, file: file, startedAt: .now(), streams: streams)
        pending = []
        pendingErrors = []
        loaderError = nil
        // Its end, from a thread of its own that waits for it without reaping it; reaped on the queue.
        let executor = context.executor
        let waiting = DetachedThread.start { [weak self] in
            Spawn.waitUntilEnded(child)
            guard let self else {
                Spawn.waitForExit(child)
                return
            }
            executor.async(on: self) { $0.helperEnded(child, generation) }
        }
        guard waiting else {
            kill(child, SIGKILL)
            helperEnded(child, generation)
            return
        }
        context.logger.debug("contacts: started \(helper) (pid \(child))")
    }

    /// `pipe` watched on the address book's queue, `handler` called when it can be read.
    private func watch(_ pipe: Spawn.Pipe, _ handler: @escaping @Sendable (isolated EDSSource) -> Void) -> WatchedPipe {
        WatchedPipe(pipe, on: context.executor.queue) { [weak self] in self?.assumeIsolated(handler) }
    }

    /// The run is over for the daemon: its sources are cancelled (their handlers close the pipes)
    /// and its stdin ends. Its process is still reaped by `helperEnded`.
    private func end(_ run: Run) {
        run.streams.close()
        self.run = nil
    }

    private func failed(_ text: String) {
        context.logger.warning("contacts: GNOME's address books are not read: \(text)")
        context.report(.problem(text))
        scheduleRestart()
    }

    /// posix_spawn failed. A helper that is missing, not executable or not a program is tried again
    /// when its file changes; anything else (no memory, no process left) after a pause.
    private func cannotStart(_ error: SpawnError, file: HelperFile?) {
        guard [ENOENT, ENOTDIR, EACCES, EPERM, ENOEXEC, ELOOP].contains(error.code) else {
            return failed("cannot start \(helper): \(error)")
        }
        let text = "GNOME's address books are not read: cannot start \(helper): \(error). It is tried again when that file changes."
        context.logger.error("contacts: \(text)")
        context.report(.problem(text))
        waitForChange(of: file)
    }

    // MARK: Reading

    private func readOutput(_ generation: Int) {
        guard let run, run.generation == generation else { return }
        let open = run.streams.output.drain(into: &pending)
        if run.discarded {
            pending = []
            return
        }
        var changes: [ContactChange] = []
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            handle(line: pending[start..<newline], into: &changes)
            start = newline + 1
        }
        pending.removeSubrange(..<start)
        context.apply(changes)
        if pending.count > Self.maximumLine {
            context.logger.warning("contacts: \(helper) wrote over \(Self.maximumLine) bytes without a line's end: stopped")
            self.run?.discarded = true
            pending = []
            kill(run.pid, SIGKILL)
        } else if !open {
            context.logger.debug("contacts: \(helper)'s output failed: \(String(cString: strerror(errno)))")
        }
    }

    /// The helper's stderr, into the log: its own warnings, and GLib's. The loader's failure is kept
    /// for `helperEnded`, which says it in plain words.
    private func readErrors(_ generation: Int, final: Bool = false) {
        guard let run, run.generation == generation else { return }
        _ = run.streams.errors.drain(into: &pendingErrors)
        var start = pendingErrors.startIndex
        while let newline = pendingErrors[start...].firstIndex(of: UInt8(ascii: "\n")) {
            logError(pendingErrors[start..<newline])
            start = newline + 1
        }
        pendingErrors.removeSubrange(..<start)
        if final || pendingErrors.count > Self.maximumErrorLine {
            if !pendingErrors.isEmpty { logError(pendingErrors[...]) }
            pendingErrors = []
        }
    }

    private func logError(_ line: ArraySlice<UInt8>) {
        let text = String(decoding: line.prefix(Self.maximumErrorLine), as: UTF8.self)
        guard !text.isEmpty else { return }
        if text.contains("error while loading shared libraries") {
            loaderError = loaderError ?? text
            return
        }
        context.logger.warning("contacts: \(helperName): \(text)")
    }

    private var helperName: String { URL(fileURLWithPath: helper).lastPathComponent }

    private func handle(line: ArraySlice<UInt8>, into changes: inout [ContactChange]) {
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map(Self.unescape)
        guard let kind = fields.first else { return }
        func source(_ index: Int) -> String? { index < fields.count ? "eds:" + fields[index] : nil }
        switch kind {
        case "set" where fields.count >= 4:
            let key = ContactKey(source: source(1)!, uid: fields[2])
            sources.insert(key.source)
            changes.append(.set(key, name: fields[3], phones: fields[4...].compactMap(phone)))
        case "remove" where fields.count >= 3:
            changes.append(.remove(ContactKey(source: source(1)!, uid: fields[2])))
        case "drop" where fields.count >= 2:
            changes.append(.removeSource(source(1)!))
            sources.remove(source(1)!)
        case "ready" where fields.count >= 2:
            context.apply(changes) // What was read is in the index before anyone hears it is ready.
            changes = []
            context.report(.sourceReady(source(1)!))
        case "eds" where fields.count >= 2:
            context.report(.evolutionDataServer(running: fields[1] == "up"))
        case "error" where fields.count >= 3:
            let where_ = fields[1].isEmpty ? "evolution-data-server" : "address book \(fields[1])"
            context.logger.warning("contacts: \(where_): \(fields[2])")
            context.report(.problem("\(where_): \(fields[2])"))
        default:
            context.logger.debug("contacts: unknown line from \(helper): \(String(decoding: line.prefix(80), as: UTF8.self))")
        }
    }

    /// A `TEL` field of a `set` line: `TYPES` 0x1F `number` (the types as EDS keeps them, comma
    /// separated), or the number alone.
    private func phone(_ field: String) -> ContactPhone? {
        let parts = field.split(separator: "\u{1F}", maxSplits: 1, omittingEmptySubsequences: false)
        let written = String(parts.last ?? "")
        guard let e164 = context.numbering.e164(written) else { return nil }
        return ContactPhone(label: parts.count == 2 ? ContactPhone.label(types: parts[0].split(separator: ",")) : "", number: written, e164: e164)
    }

    /// Undoes the helper's escapes (`\\`, `\t`, `\n`, `\r`).
    static func unescape(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(UInt8(ascii: "\\")) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        var escaped = false
        for byte in bytes {
            if escaped {
                switch byte {
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "r"): out.append(13)
                default: out.append(byte)
                }
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Its end

    /// The helper `pid` ended (its waiting thread saw it, unreaped): reaped here. Unless it was
    /// stopped, what it wrote last is read, its contacts go, and it is started again after a pause,
    /// or, when it could not load its libraries, once its file changes.
    private func helperEnded(_ pid: pid_t, _ generation: Int) {
        let status = Spawn.waitForExit(pid)
        guard let run, run.generation == generation else { return } // Stopped: nothing more to do.
        // It has exited: everything it wrote is in the pipes, which still have a writer (ours), so
        // this reads to the end without waiting for a hang-up.
        readOutput(generation)
        readErrors(generation, final: true)
        end(run)
        pending = []
        context.apply(sources.map { .removeSource($0) })
        sources = []
        guard !stopped else { return }
        if status == 127 || loaderError != nil { return cannotLoad(run.file, status: status) }
        let ranFor = Double(DispatchTime.now().uptimeNanoseconds - run.startedAt.uptimeNanoseconds) / 1e9
        if ranFor > restarts.settled { pause = restarts.first } // A helper that ran a while starts the pauses over.
        context.logger.warning("contacts: \(helper) \(Self.describe(status)); GNOME's address books are read again in \(Self.describe(seconds: pause))")
        context.report(.evolutionDataServer(running: false))
        scheduleRestart()
    }

    /// The loader could not start the helper: libebook (or a library it needs) is not installed.
    /// Said once, in plain words; the helper is not started again until its file changes, which a
    /// timer could not see without waking the daemon for nothing.
    private func cannotLoad(_ file: HelperFile?, status: Int32) {
        let what = loaderError.map { "the loader said: \($0.trimmingPrefix("\(helper): "))" } ?? "it \(Self.describe(status))"
        let text = "GNOME's address books need the package libebook-1.2-21, which is not installed or is broken "
            + "(\(helper) could not load its libraries; \(what)). Install it with: sudo apt install libebook-1.2-21. "
            + "The helper is started again when its file changes, or when monkeycalld starts again."
        context.logger.error("contacts: \(text)")
        context.report(.problem(text))
        waitForChange(of: file)
    }

    static func describe(_ status: Int32) -> String {
        switch status {
        case -1: "ended"
        case 128...: "was ended by signal \(status - 128) (\(String(cString: strsignal(status - 128))))"
        default: "exited with status \(status)"
        }
    }

    static func describe(seconds: Double) -> String {
        seconds >= 1 ? "\(Int(seconds)) s" : "\(Int((seconds * 1000).rounded())) ms"
    }

    private func scheduleRestart() {
        guard !stopped else { return }
        let work = DispatchWorkItem { [weak self] in
            self?.assumeIsolated { source in
                source.restart = nil
                source.launch()
            }
        }
        restart = work
        context.executor.queue.asyncAfter(deadline: .now() + pause, execute: work)
        pause = min(pause * 2, restarts.longest)
    }

    // MARK: Waiting for a new helper

    /// Watches the helper's folder (inotify: the kernel wakes the daemon only when something there
    /// changes) until the helper's file is another than `file`: installed again, replaced, touched.
    private func waitForChange(of file: HelperFile?) {
        stopWatchingFile()
        unusableFile = file
        let folder = URL(fileURLWithPath: helper).deletingLastPathComponent().path
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            context.logger.warning("contacts: cannot watch \(folder) (\(String(cString: strerror(errno)))): \(helper) is not started again before monkeycalld restarts")
            return
        }
        // Not IN_CREATE: a file being written is not a program yet; its close, or its rename into place, is.
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        guard inotify_add_watch(fd, folder, mask) >= 0 else {
            context.logger.warning("contacts: cannot watch \(folder) (\(String(cString: strerror(errno)))): \(helper) is not started again before monkeycalld restarts")
            close(fd)
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: context.executor.queue)
        source.setEventHandler { [weak self] in self?.assumeIsolated { $0.folderChanged(fd) } }
        source.setCancelHandler { close(fd) }
        source.resume()
        fileWatch = source
        // Changed between its start and now, before the watch could see it: started again at once.
        startIfChanged()
    }

    private func stopWatchingFile() {
        fileWatch?.cancel() // Its cancel handler closes the inotify descriptor.
        fileWatch = nil
    }

    private func folderChanged(_ fd: Int32) {
        let name = helperName
        var named = false, folderGone = false
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            while true {
                let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<min(nameStart + Int(event.len), count)]).prefix { $0 != 0 }
                    offset = nameStart + Int(event.len)
                    if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { folderGone = true }
                    if String(decoding: nameBytes, as: UTF8.self) == name { named = true }
                }
            }
        }
        if folderGone {
            stopWatchingFile()
            context.logger.warning("contacts: the folder of \(helper) went: it is not started again before monkeycalld restarts")
            return
        }
        if named { startIfChanged() }
    }

    /// Starts the helper again when its file is another than the one that could not run.
    private func startIfChanged() {
        guard fileWatch != nil, let now = HelperFile(path: helper), now != unusableFile, access(helper, X_OK) == 0 else { return }
        stopWatchingFile()
        unusableFile = nil
        pause = restarts.first
        context.logger.notice("contacts: \(helper) changed: starting it again")
        launch()
    }
}

/// The helper's standard streams while it runs: what `EDSSource.end` closes.
private struct HelperStreams {
    /// The write end of its stdin: closed to tell it to go.
    let input: Int32
    let output: WatchedPipe
    let errors: WatchedPipe

    /// Stops watching stdout and stderr (their sources close those pipes) and ends stdin.
    func close() {
        output.stop()
        errors.stop()
        Glibc.close(input)
    }
}

/// One of the helper's output pipes while the daemon reads it: the read end, non-blocking,
/// watched by a read source on the given queue. The pipe's descriptors belong to the source:
/// `stop` cancels it, and its cancel handler closes both ends, once dispatch has let go of the
/// read end. The write end stays open until then, so that the pipe never hangs up while it is
/// watched (see `EDSSource`'s comment: a hang-up crashed libdispatch).
private struct WatchedPipe {
    private let fd: Int32
    private let source: DispatchSourceRead

    /// `handler` is called on `queue` whenever the pipe can be read.
    init(_ pipe: Spawn.Pipe, on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) {
        let (fd, writer) = (pipe.read, pipe.write)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler(handler: handler)
        source.setCancelHandler {
            close(fd)
            close(writer)
        }
        source.resume()
    }

    /// Stops watching; the cancel handler closes the pipe.
    func stop() { source.cancel() }

    /// Reads what waits in the pipe onto `buffer`, up to 1 MiB at a time (a helper
    /// that writes without end must not keep the queue here: the source fires again for the
    /// rest); false on a read error.
    func drain(into buffer: inout [UInt8]) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 * 1024) { chunk in
            var total = 0
            while total < 1 << 20 {
                let count = Glibc.read(fd, chunk.baseAddress, chunk.count)
                if count > 0 {
                    buffer.append(contentsOf: chunk[0..<count])
                    total += count
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                // 0 cannot come while the daemon holds the write end; EAGAIN: all is read.
                return count == 0 || errno == EAGAIN || errno == EWOULDBLOCK
            }
            return true
        }
    }
}

/// Which file a path is, and which version of it: another inode, size, mode, modification or
/// status-change time is another helper (a package installed again, a file copied over, a
/// `touch`, a `chmod +x`).
struct HelperFile: Equatable {
    /// Which file: its device and inode.
    let identity: [UInt64]
    /// Which version of it: its size, its mode, and its modification and status-change times
    /// (seconds, nanoseconds). Plain numbers, so that `==` compares them all (`timespec` is not
    /// Equatable).
    let version: [Int]

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        identity = [UInt64(info.st_dev), UInt64(info.st_ino)]
        version = [Int(info.st_size), Int(info.st_mode), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
    }
}
