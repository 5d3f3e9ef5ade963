import Dispatch
import FoundationEssentials
import ProcessSpawn
import QueueExecutor
#if canImport(Glibc)
import Glibc
import Synchronization
#endif

/// The baresip configuration the bridge writes when it runs baresip itself:
/// `config` and `accounts` in a folder of their own (0700), each file 0600
/// (the accounts file holds the password).
public struct BaresipConfiguration: Sendable {
    public var account: SIPAccount
    public var password: String?
    /// Where `ctrl_tcp` listens (always loopback: it takes commands from anyone who connects).
    public var control: ControlAddress
    /// `sip_listen`, e.g. `0.0.0.0:5060`; nil: baresip's default.
    public var sipListen: String?
    /// `net_interface`: keeps SDP and RTP on one interface (`127.0.0.1` for tests).
    public var netInterface: String?
    /// No sound card: a 440 Hz tone as the microphone and a sink that plays nowhere.
    public var headlessAudio = false
    /// Where baresip's modules are; nil: the first of the usual places that exists.
    public var modulePath: String?

    public init(account: SIPAccount, password: String?, control: ControlAddress) {
        self.account = account
        self.password = password
        self.control = control
    }

    static let modulePaths = ["/usr/lib/baresip/modules", "/usr/lib/x86_64-linux-gnu/baresip/modules",
                              "/usr/lib/aarch64-linux-gnu/baresip/modules", "/usr/local/lib/baresip/modules"]

    /// The `config` file's text.
    public var configText: String {
        let modules = modulePath ?? Self.modulePaths.first { FileManager.default.fileExists(atPath: $0) } ?? Self.modulePaths[0]
        var lines = ["# Written by monkeycall-baresip; rewritten at every start.", "poll_method epoll"]
        if let sipListen { lines.append("sip_listen \(sipListen)") }
        if let netInterface { lines.append("net_interface \(netInterface)") }
        if headlessAudio {
            // aubridge with a name no source uses plays into nothing.
            lines += ["audio_player aubridge,nowhere", "audio_source ausine,440", "audio_alert aubridge,nowhere",
                      "ausrc_srate 48000", "ausrc_channels 2"]
        } else {
            lines += ["audio_player alsa,default", "audio_source alsa,default", "audio_alert alsa,default"]
        }
        lines += ["module_path \(modules)", "module g711.so"]
        let codecs = ["opus.so", "g722.so"].filter { FileManager.default.fileExists(atPath: modules + "/" + $0) }
        lines += codecs.map { "module \($0)" }
        lines += headlessAudio ? ["module ausine.so", "module aubridge.so"] : ["module alsa.so"]
        lines += ["module_tmp account.so", "module_app menu.so", "module_app ctrl_tcp.so", "ctrl_tcp_listen \(control)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `accounts` file's text.
    public var accountsText: String { account.accountsLine(password: password) + "\n" }

    /// Writes both files into `directory` (created 0700), each 0600 from its creation on.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        for (name, text) in [("config", configText), ("accounts", accountsText)] {
            let path = directory.appendingPathComponent(name).path
            // Created with 0600 before a byte is written: the password is never readable by others.
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw ConfigurationError(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            fchmod(fd, 0o600)
            let bytes = Array(text.utf8)
            guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
                throw ConfigurationError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// `$XDG_CONFIG_HOME/monkeycall/baresip` (or `~/.config/…`).
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        return base.appendingPathComponent("monkeycall/baresip")
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
}

/// A baresip the bridge runs itself, with its configuration folder; stopped with the bridge.
public final class BaresipProcess: Sendable {
    public let pid: Int32
    private let state: State

    /// What the thread that waits for baresip shares with the rest.
    private final class State: Sendable {
        /// Whether baresip is not yet reaped: cleared by the thread that waits for it, before it
        /// reaps it. A signal is sent only with this lock held and this true, so it never reaches
        /// another process that got baresip's pid after it was reaped.
        let running = Mutex(true)
        /// Told when baresip exits by itself (not after `stop()`).
        let exitHandler: Mutex<(@Sendable (Int32) -> Void)?>
        init(_ onExit: @escaping @Sendable (Int32) -> Void) { exitHandler = Mutex(onExit) }
    }

    /// Starts `baresip -f DIRECTORY` with stdin from /dev/null, its output on our standard error;
    /// `onExit` hears its status if it exits before `stop()`.
    public init(executable: String = "baresip", directory: URL, onExit: @escaping @Sendable (Int32) -> Void) throws {
        let state = State(onExit)
        self.state = state
        guard let path = Self.locate(executable) else {
            throw ConfigurationError(description: "\(executable) is not installed: install it with `sudo apt install baresip-core`, or attach to a running baresip with --control HOST:PORT")
        }
        // setpriv (util-linux) gives baresip a parent-death signal: it stops even when the bridge is killed.
        let setpriv = "/usr/bin/setpriv"
        let argv = access(setpriv, X_OK) == 0 ? [setpriv, "--pdeathsig", "TERM", "--", path, "-f", directory.path] : [path, "-f", directory.path]
        // Started from a thread that lives exactly as long as baresip: the parent-death signal
        // fires when the *thread* that started the child ends, and pool threads come and go.
        // Spawn starts it with no signal blocked (Swift's threads block SIGTERM, which baresip
        // must hear from `stop()` and as its parent-death signal).
        let started = Mutex<Result<pid_t, SpawnError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let threadStarted = DetachedThread.start {
            let result = Spawn.start(argv, environment: ProcessInfo.processInfo.environment,
                                     files: [.open(path: "/dev/null", flags: O_RDONLY, as: 0), .duplicate(2, as: 1)])
            started.withLock { $0 = result }
            ready.signal()
            guard case .success(let child) = result else { return }
            // Ended, not yet reaped: no signal is sent after this, then it is reaped.
            Spawn.waitUntilEnded(child)
            state.running.withLock { $0 = false }
            let code = Spawn.waitForExit(child)
            state.exitHandler.withLock { $0 }?(code)
        }
        guard threadStarted else { throw ConfigurationError(description: "cannot start \(path): no thread to wait for it") }
        ready.wait()
        switch started.withLock({ $0 })! {
        case .success(let child): pid = child
        case .failure(let error): throw ConfigurationError(description: "cannot start \(path): \(error)")
        }
    }

    private var isRunning: Bool { state.running.withLock { $0 } }

    /// Stops baresip (SIGTERM) and waits up to 2 s for it.
    public func stop() {
        state.exitHandler.withLock { $0 = nil }
        guard signal(SIGTERM) else { return }
        let deadline = ContinuousClock.now + .seconds(2)
        while isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        signal(SIGKILL)
    }

    /// Sends `number` to baresip unless it has ended; whether it was sent.
    @discardableResult
    private func signal(_ number: Int32) -> Bool {
        state.running.withLock { running in
            guard running else { return false }
            kill(pid, number)
            return true
        }
    }

    /// The executable's path: as given when it has a slash, else the first on PATH; nil when there is none.
    public static func locate(_ executable: String = "baresip") -> String? {
        Spawn.executablePath(executable, environment: ProcessInfo.processInfo.environment)
    }

    /// A free TCP port on loopback for `ctrl_tcp`.
    public static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ConfigurationError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ConfigurationError(description: "cannot find a free port: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}
