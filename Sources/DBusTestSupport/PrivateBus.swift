import DBus
import Foundation

/// A private `dbus-daemon` of the session type for tests and benchmarks,
/// listening on a socket in a fresh temporary folder. Stopped on `stop()` or release.
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    /// Where `.service` files for D-Bus activation may be placed.
    public let servicesDirectory: URL
    public let directory: URL
    private let process: Spawned

    /// `servicesDirectory`: where the bus looks for `.service` files (default: a fresh folder of its own).
    public init(environment extra: [String: String] = [:], servicesDirectory: URL? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-bus-\(UUID().uuidString.prefix(8))")
        self.servicesDirectory = servicesDirectory ?? directory.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: self.servicesDirectory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try Self.configuration(socketDirectory: directory.path, servicesDirectory: self.servicesDirectory.path)
            .write(to: config, atomically: true, encoding: .utf8)

        let reader = FirstLineReader()
        // --nofork: the daemon stays our own child, which dies with this process (see Spawned);
        // a forked daemon would be a grandchild, and nothing would stop it.
        process = try Spawned("/usr/bin/dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
                              environment: ProcessInfo.processInfo.environment.merging(extra) { $1 },
                              // stderr only warns that the fd limit cannot be raised: noise here.
                              onOutput: { isStderr, data in if !isStderr { reader.add(data) } },
                              onExit: { _ in reader.finish() })
        // dbus-daemon prints its address as soon as it listens.
        guard let line = reader.wait(seconds: 20), !line.isEmpty else {
            process.signal(SIGKILL)
            throw TestSupportError("dbus-daemon did not print its address")
        }
        address = line
    }

    /// Starts a bus on a thread of its own. Tests run many at once on as many
    /// Swift concurrency threads as there are cores (two here): waiting there
    /// for dbus-daemon to start holds up every other test's awaited events.
    public static func start(environment extra: [String: String] = [:], servicesDirectory: URL? = nil) async throws -> PrivateBus {
        try await Handoff.value { deliver in
            Thread { deliver(Result { try PrivateBus(environment: extra, servicesDirectory: servicesDirectory) }) }.start()
        }
    }

    /// Released without `stop()`: the bus is stopped and its folder removed on a thread of its own, for the same reason.
    deinit {
        let (process, directory) = (process, directory)
        Thread { Self.stop(process, directory) }.start()
    }

    /// Stops the bus and waits for it to exit (up to 5 s).
    public func stop() {
        Self.stop(process, directory)
    }

    private static func stop(_ process: Spawned, _ directory: URL) {
        process.signal(SIGTERM)
        _ = process.wait(seconds: 5)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment a child process needs to use this bus as its session bus.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        // Programs on this bus keep their data (a daemon's Recents) with the bus, not in the user's home.
        env["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        // Desktop settings (GNOME's Do Not Disturb) in memory: never the user's own dconf.
        env["GSETTINGS_BACKEND"] = "memory"
        // No system bus: a daemon under test never takes a sleep inhibitor from the machine's logind.
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + directory.appendingPathComponent("no-system-bus").path
        // No sound server unless a test brings one (SoundServer): a ringing test call never plays
        // on the machine's speakers.
        env["PULSE_SERVER"] = "unix:" + directory.appendingPathComponent("no-sound-server").path
        // English, whatever the developer's own language, unless a test asks for one (LANG, LANGUAGE);
        // from the catalogs of this checkout (po/), compiled for the tests.
        for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LC_TIME", "LC_CTYPE"] { env[name] = nil }
        env["LANG"] = "C.UTF-8"
        env["MONKEYCALL_LOCALE_DIR"] = Catalogs.directory
        return env
    }

    /// The bus's limits, well above a session bus's defaults: sizes in bytes, timeouts in milliseconds,
    /// and counts of connections, names, match rules and pending replies for the stress tests.
    static let limits: [(name: String, value: Int)] = [
        ("max_incoming_bytes", 1_000_000_000), ("max_outgoing_bytes", 1_000_000_000),
        ("max_message_size", 134_217_728), ("max_message_unix_fds", 16),
        ("service_start_timeout", 120_000), ("auth_timeout", 240_000),
        ("max_completed_connections", 100_000), ("max_incomplete_connections", 10_000), ("max_connections_per_user", 100_000),
        ("max_pending_service_starts", 10_000),
        ("max_names_per_connection", 50_000), ("max_match_rules_per_connection", 50_000), ("max_replies_per_connection", 50_000),
    ]

    static func configuration(socketDirectory: String, servicesDirectory: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(socketDirectory)</listen>
          <auth>EXTERNAL</auth>
          <servicedir>\(servicesDirectory)</servicedir>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        \(limits.map { "  <limit name=\"\($0.name)\">\($0.value)</limit>" }.joined(separator: "\n"))
        </busconfig>
        """
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The first line a child prints, waited for with a deadline.
final class FirstLineReader: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    private var line: String?
    private let ready = DispatchSemaphore(value: 0)

    func add(_ data: Data) {
        let done: Bool = lock.withLock {
            guard line == nil else { return false }
            text += String(decoding: data, as: UTF8.self)
            guard let end = text.firstIndex(of: "\n") else { return false }
            line = String(text[..<end])
            return true
        }
        if done { ready.signal() }
    }

    func finish() {
        let done: Bool = lock.withLock {
            guard line == nil else { return false }
            line = ""
            return true
        }
        if done { ready.signal() }
    }

    func wait(seconds: Double) -> String? {
        guard ready.wait(timeout: .now() + seconds) == .success else { return nil }
        return lock.withLock { line }
    }
}

extension DBusError {
    /// A stand-in service (notification server, media player, logind) was released while its connection still had calls to answer.
    static let standInReleased = DBusError.failed("this test stand-in has been released")
}
