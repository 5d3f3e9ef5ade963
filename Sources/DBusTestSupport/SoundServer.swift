import Foundation

/// A real PulseAudio server for a test: a null sink (it plays in real time, into nothing) and a
/// native socket of its own in a private folder. `environment` points a client at it
/// (`PULSE_SERVER`); `streams()` reads what plays, as `pactl list sink-inputs` tells it.
public final class SoundServer: @unchecked Sendable {
    public static let executable = "/usr/bin/pulseaudio"
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.isExecutableFile(atPath: "/usr/bin/pactl")
    }

    public let folder: URL
    public let socket: String
    private var process: ChildProcess?

    /// A stream playing on the server: its index and properties (`media.role`, `event.id`, ...).
    public struct Stream: Sendable, CustomStringConvertible {
        public let index: Int
        public let properties: [String: String]
        public var description: String { "#\(index) \(properties)" }
    }

    /// `socket`: where it listens (default: in its own folder). `start`: false makes the folder only,
    /// for a server that comes later (`start()`).
    public init(socket: String? = nil, start: Bool = true) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-pulse-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.socket = socket ?? folder.appendingPathComponent("native").path
        if start { try await self.start() }
    }

    deinit {
        process?.kill()
        try? FileManager.default.removeItem(at: folder)
    }

    /// What a client needs to reach this server.
    public var environment: [String: String] { ["PULSE_SERVER": "unix:" + socket] }

    /// Starts the server and returns once it answers.
    public func start() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder.path
        environment["HOME"] = folder.path
        let process = try ChildProcess(Self.executable, ["--daemonize=no", "-n", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
                                                         "-L", "module-null-sink", "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"],
                                       environment: environment)
        self.process = process
        // Generous, as for the other programs the tests start: on a machine running the whole suite
        // (a GNOME Shell, the Phone window, the fuzzers) pulseaudio once took over 20 s to answer.
        let deadline = ContinuousClock.now + Deadlines.stretched(.seconds(60))
        while ContinuousClock.now < deadline {
            if (try? await pactl(["info"])) != nil { return }
            guard process.isRunning else { throw TestSupportError("pulseaudio exited: \(process.output)") }
            try await Task.sleep(for: .milliseconds(20))  // a poll for the socket, bounded by the deadline
        }
        throw TestSupportError("pulseaudio did not answer within 60 s: \(process.output)")
    }

    /// The server dies, as a crashed one does.
    public func kill() {
        process?.kill()
    }

    /// The streams playing now.
    public func streams() async throws -> [Stream] {
        Self.parse(try await pactl(["list", "sink-inputs"]))
    }

    /// The next moment a stream matching `predicate` plays, or nil at the deadline.
    public func waitForStream(timeout: Duration = .seconds(20), where predicate: (Stream) -> Bool) async throws -> Stream? {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        repeat {
            if let stream = try await streams().first(where: predicate) { return stream }
            try await Task.sleep(for: .milliseconds(20))  // a poll of the server, bounded by the deadline
        } while ContinuousClock.now < deadline
        return nil
    }

    /// Waits until no stream matches `predicate`; false at the deadline.
    public func waitForSilence(timeout: Duration = .seconds(20), where predicate: (Stream) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        repeat {
            if try await !streams().contains(where: predicate) { return true }
            try await Task.sleep(for: .milliseconds(20))  // a poll of the server, bounded by the deadline
        } while ContinuousClock.now < deadline
        return false
    }

    /// The server's stream events as they happen (`pactl subscribe`): when a stream comes and
    /// goes, within a millisecond, where polling `streams()` takes a pactl run each time.
    public final class StreamEvents: @unchecked Sendable {
        private let process: ChildProcess

        init(_ process: ChildProcess) { self.process = process }
        deinit { process.kill() }

        /// The streams that have appeared so far, by index.
        public var appeared: [Int] { Self.indexes("new", in: process.output) }

        /// The index of the first stream newer than `index` that appeared, once it does; nil at the deadline.
        public func new(after index: Int, timeout: Duration = .seconds(20)) async -> Int? {
            guard await process.waitForOutput(timeout: timeout, where: { Self.indexes("new", in: $0).contains { $0 > index } }) else { return nil }
            return Self.indexes("new", in: process.output).first { $0 > index }
        }

        /// Waits until stream `index` is gone; false at the deadline.
        public func removed(_ index: Int, timeout: Duration = .seconds(20)) async -> Bool {
            await process.waitForOutput(timeout: timeout) { Self.indexes("remove", in: $0).contains(index) }
        }

        /// "Event 'new' on sink-input #3" lines.
        static func indexes(_ event: String, in output: String) -> [Int] {
            let prefix = "Event '\(event)' on sink-input #"
            return output.split(separator: "\n").compactMap { line in line.hasPrefix(prefix) ? Int(line.dropFirst(prefix.count)) : nil }
        }
    }

    /// Starts following the server's stream events; returns once it follows them.
    public func events() async throws -> StreamEvents {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(self.environment) { $1 }
        let process = try ChildProcess("/usr/bin/pactl", ["subscribe"], environment: environment)
        let events = StreamEvents(process)
        // pactl says nothing when it has subscribed: a module loaded and unloaded shows it listens.
        let loaded = try await pactl(["load-module", "module-null-sink", "sink_name=events_ready"]).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await pactl(["unload-module", loaded])
        guard await process.waitForOutput(containing: "Event 'remove' on module #\(loaded)") else {
            throw TestSupportError("pactl subscribe did not follow the server: \(process.output)")
        }
        return events
    }

    private func pactl(_ arguments: [String]) async throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(self.environment) { $1 }
        let pactl = try ChildProcess("/usr/bin/pactl", arguments, environment: environment)
        guard let status = await pactl.waitForExit(timeout: .seconds(20)), status == 0 else {
            throw TestSupportError("pactl \(arguments.joined(separator: " ")): \(pactl.output)")
        }
        return pactl.standardOutput
    }

    /// `pactl list sink-inputs`: "Sink Input #N" blocks, each with a "Properties:" list of `key = "value"`.
    static func parse(_ text: String) -> [Stream] {
        var streams: [Stream] = []
        var index: Int?
        var properties: [String: String] = [:]
        func flush() {
            if let index { streams.append(Stream(index: index, properties: properties)) }
            properties = [:]
        }
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Sink Input #") {
                flush()
                index = Int(trimmed.dropFirst("Sink Input #".count))
            } else if let equals = trimmed.range(of: " = \""), trimmed.hasSuffix("\"") {
                properties[String(trimmed[..<equals.lowerBound])] = String(trimmed[equals.upperBound..<trimmed.index(before: trimmed.endIndex)])
            }
        }
        flush()
        return streams
    }
}
