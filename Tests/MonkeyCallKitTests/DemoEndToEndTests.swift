import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// monkeycalld, the monkeycall CLI and monkeycall-demo as separate processes on a private bus.
final class DemoSetup: @unchecked Sendable {
    let bus: PrivateBus
    private(set) var daemon: ChildProcess
    let demo: ChildProcess

    init(_ demoArguments: [String]) async throws {
        bus = try await PrivateBus.start()
        daemon = try await bus.startMonkeycalld()
        demo = try await bus.launch("monkeycall-demo", demoArguments, readyWhen: "MonkeyCall is ready")
    }

    deinit {
        demo.kill()
        daemon.kill()
        bus.stop()
    }

    /// Kills monkeycalld and starts a new one on the same bus.
    func restartDaemon() async throws {
        daemon.kill()
        _ = await daemon.waitForExit()
        daemon = try await bus.startMonkeycalld()
    }

    func cli(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await bus.monkeycall(arguments)
    }
}

@Suite("monkeycall-demo end to end")
struct DemoEndToEndTests {
    @Test("monkeycall dial alice: the demo starts the call, connects it after its delays, and ends it")
    func dialAndEnd() async throws {
        let setup = try await DemoSetup(["--connect-after", "0.3", "--connected-after", "0.2"])
        let dial = try await setup.cli("dial", "alice")
        #expect(dial.status == 0, "\(dial.stderr)")
        let uuid = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await setup.demo.waitForOutput(containing: "Starting an outgoing call to alice (call \(uuid))"), "\(setup.demo.output)")
        #expect(await setup.demo.waitForOutput(containing: "The call to alice is connecting."))
        #expect(await setup.demo.waitForOutput(containing: "The call to alice is connected."))
        let output = setup.demo.output
        let start = try #require(output.range(of: "Starting an outgoing call"))
        let connecting = try #require(output.range(of: "is connecting"))
        let connected = try #require(output.range(of: "is connected"))
        #expect(start.lowerBound < connecting.lowerBound && connecting.lowerBound < connected.lowerBound)
        let calls = try await setup.cli("calls")
        #expect(calls.stdout.contains("\(uuid)\tactive\toutgoing\tMonkeyCall\talice"), "\(calls.stdout)")

        let end = try await setup.cli("end")
        #expect(end.status == 0, "\(end.stderr)")
        #expect(await setup.demo.waitForOutput(containing: "The call with alice ended."), "\(setup.demo.output)")
    }

    @Test("--simulate-incoming bob rings; monkeycall answer makes it active")
    func incomingAnswered() async throws {
        let setup = try await DemoSetup(["--simulate-incoming", "bob", "--after", "0.2"])
        #expect(await setup.demo.waitForOutput(containing: "Incoming call from bob is ringing"), "\(setup.demo.output)")
        let answer = try await setup.cli("answer")
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(await setup.demo.waitForOutput(containing: "Answered the call from bob: it is active."), "\(setup.demo.output)")
        #expect(await setup.demo.waitForOutput(containing: "Audio is on"))
        let calls = try await setup.cli("calls")
        #expect(calls.stdout.contains("active\tincoming\tMonkeyCall\tbob"), "\(calls.stdout)")
    }

    @Test("a monkeycall: serviceConnection places a call; after monkeycalld restarts the demo drops its calls and is ready again")
    func openURLAndRestart() async throws {
        let setup = try await DemoSetup(["--open-url", "monkeycall://carol", "--connect-after", "0.1", "--connected-after", "0.1"])
        #expect(await setup.demo.waitForOutput(containing: "Starting an outgoing call to carol"), "\(setup.demo.output)")
        #expect(await setup.demo.waitForOutput(containing: "The call to carol is connected."), "\(setup.demo.output)")
        try await setup.restartDaemon()
        #expect(await setup.demo.waitForOutput(containing: "The MonkeyCall service was reset: dropping all 1 call(s)."), "\(setup.demo.output)")
        #expect(await setup.demo.waitForOutput(containing: "MonkeyCall is ready again"), "\(setup.demo.output)")
        let dial = try await setup.cli("dial", "dave")
        #expect(dial.status == 0, "\(dial.stderr)")
        #expect(await setup.demo.waitForOutput(containing: "Starting an outgoing call to dave"), "\(setup.demo.output)")
    }
}
