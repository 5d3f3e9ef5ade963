import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

@Suite("examples/python-provider.py")
struct PythonExampleTests {
    @Test("registers, rings, is answered, dials out (connecting, connected), ends, and registers again after a restart")
    func pythonProvider() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let daemon = try await bus.startMonkeycalld()
        defer { daemon.kill() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples/python-provider.py").path
        let app = try ChildProcess("/usr/bin/python3", [script, "--incoming", "bob", "--connect-after", "0.1"], environment: bus.environment)
        defer { app.kill() }
        #expect(await app.waitForOutput(containing: "began"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "ringing"), "\(app.output)")

        let answer = try await bus.monkeycall(["answer"])
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(await app.waitForOutput(containing: "action answer"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "audio on"))

        let dial = try await bus.monkeycall(["dial", "alice"])
        #expect(dial.status == 0, "\(dial.stderr)")
        let outgoing = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await app.waitForOutput(containing: "action start \(outgoing)"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "connected \(outgoing)"), "\(app.output)")
        let calls = try await bus.monkeycall(["calls"])
        #expect(calls.stdout.contains("\(outgoing)\tactive\toutgoing\tPyPhone\talice"), "\(calls.stdout)")
        #expect(try await bus.monkeycall(["end", outgoing]).status == 0)
        #expect(await app.waitForOutput(containing: "action end \(outgoing)"))

        daemon.kill()
        #expect(await app.waitForOutput(containing: "the service went away"), "\(app.output)")
        let second = try await bus.startMonkeycalld()
        defer { second.kill() }
        #expect(await app.waitForOutput(containing: "(registration 2)"), "\(app.output)")
    }
}
