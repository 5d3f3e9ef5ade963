import Foundation
import MonkeyCallAPI

/// A program started by a test (the daemon, the CLI, busctl, gdbus), with its
/// output collected so that a test can wait for a line with a deadline.
public final class ChildProcess: @unchecked Sendable {
    private var spawned: Spawned!
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()
    private var waiters: [(predicate: (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
    private var hasExited = false

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        spawned = try Spawned(executable, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                              onOutput: { [weak self] isStderr, data in self?.collect(data, stderr: isStderr) },
                              onExit: { [weak self] _ in
                                  self?.lock.withLock { self?.hasExited = true }
                                  self?.wakeAll()
                              })
    }

    deinit { spawned?.signal(SIGKILL) }

    public var pid: Int32 { spawned.pid }
    public var isRunning: Bool { spawned.exitStatus == nil }

    public var standardOutput: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    public var standardError: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }
    /// Both streams, for messages on failure.
    public var output: String { standardOutput + standardError }

    private func collect(_ data: Data, stderr: Bool) {
        guard !data.isEmpty else { return }
        let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
            if stderr { stderrData.append(data) } else { stdoutData.append(data) }
            let text = String(decoding: stdoutData, as: UTF8.self) + String(decoding: stderrData, as: UTF8.self)
            var ready: [CheckedContinuation<Bool, Never>] = []
            waiters.removeAll { waiter in
                guard waiter.predicate(text) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        ready.forEach { $0.resume(returning: true) }
    }

    private func wakeAll() {
        let all = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        all.forEach { $0.resume(returning: false) }
    }

    /// Waits until the output (both streams) contains `text`; false on exit or deadline.
    public func waitForOutput(containing text: String, timeout: Duration = .seconds(20)) async -> Bool {
        await waitForOutput(timeout: timeout) { $0.contains(text) }
    }

    /// Waits until the output so far (stdout, then stderr) satisfies `predicate`, as soon as it
    /// arrives; false at the deadline or when the process has exited without it.
    public func waitForOutput(timeout: Duration = .seconds(20), where predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        let deadline = Task { [weak self] in
            guard (try? await Task.sleep(for: Deadlines.stretched(timeout))) != nil else { return }
            self?.wakeAll()
        }
        defer { deadline.cancel() }
        _ = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let resumeNow: Bool = lock.withLock {
                let current = String(decoding: stdoutData, as: UTF8.self) + String(decoding: stderrData, as: UTF8.self)
                if predicate(current) || hasExited { return true }
                waiters.append((predicate: predicate, continuation: continuation))
                return false
            }
            if resumeNow { continuation.resume(returning: true) }
        }
        return predicate(output)
    }

    /// Waits for the process to exit; nil if it is still running at the deadline.
    public func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let spawned = self.spawned!
        let stretched = Deadlines.stretched(timeout)
        let seconds = Double(stretched.components.seconds) + Double(stretched.components.attoseconds) / 1e18
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: spawned.wait(seconds: seconds)) }
        }
    }

    public func terminate() { spawned.signal(SIGTERM) }
    public func interrupt() { spawned.signal(SIGINT) }
    public func kill() { spawned.signal(SIGKILL) }

    /// Runs a program to completion and returns its status and output.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: Duration = .seconds(30)) async throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try ChildProcess(executable, arguments, environment: environment)
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.kill()
            throw TestSupportError("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        return (status, child.standardOutput, child.standardError)
    }
}

/// Where the package's built executables are: next to the running test or benchmark binary.
public enum BuiltProducts {
    public static var directory: URL {
        if let override = ProcessInfo.processInfo.environment["MONKEYCALL_BIN_DIR"] { return URL(fileURLWithPath: override) }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

extension PrivateBus {
    /// Starts the built product `name` with this bus in its environment and waits until its
    /// output says `ready`; throws with what it printed when it does not.
    public func launch(_ name: String, _ arguments: [String], environment extra: [String: String] = [:],
                       readyWhen ready: String) async throws -> ChildProcess {
        let child = try ChildProcess(BuiltProducts.path(name), arguments, environment: environment.merging(extra) { $1 })
        // Generous: under the whole suite's load a program (baresip behind the bridge, say) can take
        // tens of seconds to be ready; one that is ready is waited for no longer.
        guard await child.waitForOutput(containing: ready, timeout: .seconds(60)) else {
            throw TestSupportError("\(name) did not start: \(child.output)")
        }
        return child
    }

    /// A real monkeycalld on this bus, once it serves the API. Under ThreadSanitizer its action and
    /// ring timeouts stretch as the tests' deadlines do (`Deadlines.serviceTimeout`), unless `extra`
    /// sets them.
    public func startMonkeycalld(_ extra: [String] = [], environment: [String: String] = [:]) async throws -> ChildProcess {
        var arguments = ["--address", address] + extra
        if Deadlines.underThreadSanitizer {
            for (option, seconds) in [("--action-timeout", 10.0), ("--ring-timeout", 45)] where !extra.contains(option) {
                arguments += [option, String(Deadlines.serviceTimeout(seconds))]
            }
        }
        return try await launch("monkeycalld", arguments, environment: environment, readyWhen: "serving \(Telephony1.busName)")
    }

    /// Runs the built `monkeycall` CLI on this bus, to its end.
    public func monkeycall(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run(BuiltProducts.path("monkeycall"), arguments, environment: environment)
    }

    /// Installs the built product `name` with `arguments` for D-Bus activation as the owner of
    /// `busName`: its service file, in the folder the bus reads them from.
    public func installForActivation(_ busName: String, _ name: String, _ arguments: [String]) throws {
        let service = """
            [D-BUS Service]
            Name=\(busName)
            Exec=\(([BuiltProducts.path(name)] + arguments).joined(separator: " "))
            """
        try service.write(to: servicesDirectory.appendingPathComponent("\(busName).service"), atomically: true, encoding: .utf8)
    }
}
