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
/// `ContactNumbering` as the vCard folders. When the helper ends unexpectedly, what it gave is
/// dropped and it is started again after a pause (1 s, doubling up to a minute; a one-shot
/// timer that exists only while the helper is down).
actor EDSSource {
    private let helper: String
    private let environment: [String: String]
    private let context: ContactSourceContext

    nonisolated var unownedExecutor: UnownedSerialExecutor { context.executor.asUnownedSerialExecutor() }

    private var pid: pid_t = 0
    private var input: Int32 = -1
    private var reader: DispatchSourceRead?
    private var pending: [UInt8] = []
    private var sources: Set<String> = []
    private var stopped = true
    private var pause: Double = 1
    private var startedAt = DispatchTime.now()
    private var restart: DispatchWorkItem?

    init(helper: String, environment: [String: String], context: ContactSourceContext) {
        self.helper = helper
        self.environment = environment
        self.context = context
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

    /// The helper is told to go (its stdin ends) and what it gave stays until the index is dropped.
    func stop() {
        stopped = true
        restart?.cancel()
        restart = nil
        reader?.cancel()
        reader = nil
        if input >= 0 { close(input) }
        input = -1
        if pid > 0 {
            let child = pid
            kill(child, SIGTERM)
            DetachedThread.start {
                Spawn.waitForExit(child)
            }
        }
        pid = 0
    }

    private func launch() {
        guard !stopped else { return }
        // Close-on-exec: a program the daemon starts meanwhile (an app, xdg-open) must not keep the
        // helper's stdin open, or the helper would outlive the daemon.
        let pipes: [Spawn.Pipe]
        switch Spawn.pipes(2) {
        case .success(let made): pipes = made
        case .failure(let error): return failed("pipe: \(error)")
        }
        let (input, output) = (pipes[0], pipes[1])
        let started = Spawn.start([helper], environment: environment, files: [
            .duplicate(input.read, as: 0), .duplicate(output.write, as: 1), .close(input.read), .close(output.write),
        ])
        close(input.read)
        close(output.write)
        let child: pid_t
        switch started {
        case .success(let pid): child = pid
        case .failure(let error):
            close(input.write)
            close(output.read)
            return failed("cannot start \(helper): \(error)")
        }
        pid = child
        self.input = input.write
        startedAt = .now()
        let fd = output.read
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let reader = DispatchSource.makeReadSource(fileDescriptor: fd, queue: context.executor.queue)
        reader.setEventHandler { [weak self] in self?.assumeIsolated { $0.readLines(fd) } }
        reader.setCancelHandler { close(fd) }
        reader.resume()
        self.reader = reader
        context.logger.debug("contacts: started \(helper) (pid \(child))")
    }

    private func failed(_ text: String) {
        context.logger.warning("contacts: GNOME's address books are not read: \(text)")
        context.report(.problem(text))
        scheduleRestart()
    }

    private func readLines(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var changes: [ContactChange] = []
        var ended = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count == 0 { ended = true }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[0..<count])
        }
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            handle(line: pending[start..<newline], into: &changes)
            start = newline + 1
        }
        pending.removeSubrange(..<start)
        if ended { helperEnded(into: &changes) }
        context.apply(changes)
    }

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

    /// The helper's output ended: it exited or was stopped. Its contacts go; unless we stopped it,
    /// it is started again after a pause.
    private func helperEnded(into changes: inout [ContactChange]) {
        reader?.cancel()
        reader = nil
        if input >= 0 { close(input) }
        input = -1
        let child = pid
        pid = 0
        changes.append(contentsOf: sources.map { .removeSource($0) })
        sources = []
        // Reaped on a thread of its own: its output is closed, its exit is a moment away.
        DetachedThread.start {
            Spawn.waitForExit(child)
        }
        guard !stopped else { return }
        context.logger.warning("contacts: \(helper) ended; GNOME's address books are read again in \(Int(pause)) s")
        context.report(.evolutionDataServer(running: false))
        scheduleRestart()
    }

    private func scheduleRestart() {
        guard !stopped else { return }
        // A helper that ran a while before ending starts the pauses over.
        if DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds > 60_000_000_000 { pause = 1 }
        let work = DispatchWorkItem { [weak self] in
            self?.assumeIsolated { source in
                source.restart = nil
                source.launch()
            }
        }
        restart = work
        context.executor.queue.asyncAfter(deadline: .now() + pause, execute: work)
        pause = min(pause * 2, 60)
    }
}
