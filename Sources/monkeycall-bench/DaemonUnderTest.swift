import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Synchronization

/// A private bus with `monkeycalld` serving on it, stopped together.
final class DaemonUnderTest: Sendable {
    let bus: PrivateBus
    let process: ChildProcess
    private let state = Mutex((stopped: false, killed: false))

    private init(bus: PrivateBus, process: ChildProcess) {
        self.bus = bus
        self.process = process
    }

    var address: String { bus.address }
    /// The daemon's XDG_DATA_HOME: its database, settings and call directories.
    var dataHome: URL { bus.directory.appendingPathComponent("XDG_DATA_HOME") }
    var pid: Int32 { process.pid }

    /// Starts the bus and the daemon, and returns once the daemon owns its name.
    /// `prepare` receives the daemon's XDG_DATA_HOME before it starts (to lay down a database).
    /// `options`: the daemon's own, after the bus address and the log level.
    /// `environment`: added to the daemon's (a sound server's, to ring on it).
    static func start(executable: String, options: [String], environment extra: [String: String] = [:],
                      prepare: (URL) throws -> Void = { _ in }) async throws -> DaemonUnderTest {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("no monkeycalld at \(executable); build it with `swift build -c release --product monkeycalld` or pass --daemon PATH")
        }
        let bus = try PrivateBus()
        // Whatever the daemon persists (settings, recents) goes to the bus's
        // scratch folder, not the user's home.
        var environment = bus.environment
        for variable in ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"] {
            environment[variable] = bus.directory.appendingPathComponent(variable).path
        }
        environment.merge(extra) { $1 }
        let process: ChildProcess
        do {
            try prepare(URL(fileURLWithPath: environment["XDG_DATA_HOME"]!))
            process = try ChildProcess(executable, ["--address", bus.address, "--log-level", "error"] + options, environment: environment)
        } catch {
            bus.stop()
            throw error
        }
        let daemon = DaemonUnderTest(bus: bus, process: process)
        do {
            try await daemon.waitForName(timeout: .seconds(20))
        } catch {
            await daemon.stop()
            throw error
        }
        return daemon
    }

    /// Starts a daemon, runs `body` with it, and stops it whether `body` returns or throws.
    static func running<T>(executable: String, options: [String], environment: [String: String] = [:],
                           _ body: (DaemonUnderTest) async throws -> T) async throws -> T {
        let daemon = try await start(executable: executable, options: options, environment: environment)
        do {
            let result = try await body(daemon)
            await daemon.stop()
            return result
        } catch {
            await daemon.stop()
            throw error
        }
    }

    private func waitForName(timeout: Duration) async throws {
        let connection = try Connection(address: bus.address)
        defer { connection.close() }
        let deadline = ContinuousClock.now + timeout
        while try await connection.nameOwner(Telephony1.busName) == nil {
            guard process.isRunning else { throw BenchError("monkeycalld exited during start-up\(outputNote)") }
            guard ContinuousClock.now < deadline else {
                throw BenchError("monkeycalld did not take \(Telephony1.busName) within \(timeout)\(outputNote)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The daemon's resident set size in bytes (VmRSS).
    func residentBytes() throws -> Int { try ProcStatus.bytes(pid, "VmRSS") }

    /// The part of the RSS that is the daemon's own memory (heap, stacks), not pages mapped from files.
    func anonymousBytes() throws -> Int { try ProcStatus.bytes(pid, "RssAnon") }

    /// "dynamically" when the daemon has the Swift runtime's shared library mapped, else "statically" (`--static-swift-stdlib`).
    func swiftRuntimeLinkage() throws -> String {
        // Read to the end: /proc files have no size, and this one is longer than a page.
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { throw BenchError("cannot read /proc/\(pid)/maps") }
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return maps.contains("/libswiftCore.so") ? "dynamically" : "statically"
    }

    /// What the daemon printed, for error messages; empty when it said nothing.
    var outputNote: String {
        let output = process.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let state = process.isRunning ? "" : " (monkeycalld has exited)"
        guard !output.isEmpty else { return state }
        return "\(state)\nmonkeycalld said:\n" + output.split(separator: "\n").suffix(20).joined(separator: "\n")
    }

    /// Stops the daemon (SIGTERM, then SIGKILL after 5 s) and the bus; only the first stop does anything.
    func stop() async {
        guard markStopped() else { return }
        process.terminate()
        if await process.waitForExit(timeout: .seconds(5)) == nil { process.kill() }
        bus.stop()
    }

    /// Stops both at once, without waiting for a clean exit: for a signal handler.
    func kill() {
        guard markStopped() else { return }
        state.withLock { $0.killed = true }
        process.kill()
        bus.stop()
    }

    /// Whether `kill()` stopped it: then errors that follow are its echo, not failures.
    var wasKilled: Bool { state.withLock { $0.killed } }

    private func markStopped() -> Bool {
        state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
    }
}
