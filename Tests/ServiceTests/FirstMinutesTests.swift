import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// What a new user does first, in the README's order: scripts/run, the CLI, the Python example.
@Suite("The first five minutes")
struct FirstMinutesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the README's 'Use it' says how to get monkeycall before its first monkeycall command")
    func readmeUseIt() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Use it\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let firstCommand = try #require(section.range(of: "\n    monkeycall "), "no monkeycall command in Use it")
        let before = section[..<firstCommand.lowerBound]
        #expect(before.contains("swift run monkeycall") && before.contains("scripts/install"), "\(before)")
    }

    @Test("scripts/run without a session bus prints a clean export line that works as it is, and what to run next")
    func runPrintsAnExportLine() async throws {
        var environment = ProcessInfo.processInfo.environment
        for name in ["DBUS_SESSION_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "XDG_RUNTIME_DIR"] { environment[name] = nil }
        environment["XDG_DATA_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-run-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: environment["XDG_DATA_HOME"]!) }
        let run = try ChildProcess(Self.root.appendingPathComponent("scripts/run").path,
                                   ["--from", BuiltProducts.directory.path, "--no-notifications", "--no-inhibit-sleep"], environment: environment)
        defer { run.kill() }
        #expect(await run.waitForOutput(containing: "serving \(Telephony1.busName)"), "\(run.output)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let export = try #require(lines.first { $0.hasPrefix("export ") }, "\(run.output)")
        let address = try #require(export.wholeMatch(of: /export DBUS_SESSION_BUS_ADDRESS='([^']+)'/)?.1, "not a clean export line: \(export)")
        #expect(lines.contains { $0.contains("monkeycall status") }, "what to run next: \(run.output)")

        // Pasted into a shell as it is, it reaches the daemon.
        let status = try await ChildProcess.run("/bin/sh", ["-c", "\(export); exec \(BuiltProducts.path("monkeycall")) status"], environment: environment)
        #expect(status.status == 0 && status.stdout.contains("is running"), "\(status.stdout)\(status.stderr)")

        // Stop the daemon; dbus-run-session then stops its bus and exits.
        try await Self.terminateService(on: String(address))
        #expect(await run.waitForExit() == 0, "\(run.output)")
    }

    @Test("examples/python-provider.py starts an installed, stopped service by D-Bus activation, and takes monkeycall: links")
    func pythonExampleActivates() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        // Installed (a service file the bus reads), not running.
        try bus.installForActivation(Telephony1.busName, "monkeycalld", ["--no-inhibit-sleep", "--database", bus.directory.appendingPathComponent("monkeycall.sqlite").path])
        let script = Self.root.appendingPathComponent("examples/python-provider.py").path
        let app = try ChildProcess("/usr/bin/python3", [script], environment: bus.environment)
        defer { app.kill() }
        #expect(await app.waitForOutput(containing: "registered as PyPhone"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "began"), "\(app.output)")

        let notifications = try await NotificationServer(address: bus.address)
        let link = try await bus.monkeycall(["open", "monkeycall://alice"])
        #expect(link.status == 0, "\(link.stderr)")
        try await notifications.confirmLink()
        #expect(await app.waitForOutput(containing: "action start"), "\(app.output)")
        try await Self.terminateService(on: bus.address)
    }

    /// SIGTERM to the process that owns the service's name on the bus (one the bus or a script started).
    static func terminateService(on address: String) async throws {
        let bus = try Connection(address: address)
        let reply = try await bus.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                                       member: "GetConnectionUnixProcessID", [.string(Telephony1.busName)])
        guard case .uint32(let pid)? = reply.first else { throw TestSupportError("no pid: \(reply)") }
        kill(pid_t(pid), SIGTERM)
    }

    @Test("the Python example points at files that exist")
    func pythonExampleReferences() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("examples/python-provider.py"), encoding: .utf8)
        for path in text.matches(of: /(?:dbus|docs|scripts|examples)\/[A-Za-z0-9._\/-]+[A-Za-z0-9]/).map({ String($0.output) }) {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path), "\(path) does not exist")
        }
        #expect(!text.contains("API.md"))
    }
}
