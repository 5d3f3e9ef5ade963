import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import TelephonyService
import Testing

/// The real `monkeycalld` binary on a private bus, driven by busctl, gdbus, the
/// `monkeycall` CLI and a provider written in Python.
final class RunningDaemon: @unchecked Sendable {
    let bus: PrivateBus
    let daemon: ChildProcess
    /// A bus passed in belongs to the test, which may start more daemons on it.
    private let ownsBus: Bool

    /// `environment`: added to the bus's environment for the daemon.
    init(bus: PrivateBus? = nil, _ extra: [String] = [], environment: [String: String] = [:]) async throws {
        if let bus { self.bus = bus } else { self.bus = try await PrivateBus.start() }
        ownsBus = bus == nil
        // The database, like the bus, lives in the bus's folder unless the test names one.
        let database = extra.contains("--database") ? [] : ["--database", self.bus.directory.appendingPathComponent("monkeycall.sqlite").path]
        daemon = try ChildProcess(BuiltProducts.path("monkeycalld"), ["--address", self.bus.address] + database + extra, environment: self.bus.environment.merging(environment) { $1 })
        guard await daemon.waitForOutput(containing: "serving \(Telephony1.busName)") else {
            throw TestSupportError("monkeycalld did not start: \(daemon.output)")
        }
    }

    deinit {
        daemon.kill()
        if ownsBus { bus.stop() }
    }

    /// Runs a command with this bus as the session bus.
    func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run(executable, arguments, environment: bus.environment)
    }

    func cli(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await run(BuiltProducts.path("monkeycall"), arguments)
    }
}

@Suite("monkeycalld end to end")
struct DaemonEndToEndTests {
    @Test("busctl introspects it, gdbus reads Version, SIGTERM ends it with status 0")
    func introspectAndStop() async throws {
        let daemon = try await RunningDaemon()
        let introspection = try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "introspect", Telephony1.busName, Telephony1.rootPath.rawValue])
        #expect(introspection.status == 0, "\(introspection.stderr)")
        for interface in [Telephony1.Manager.interface, Telephony1.CallController.interface, "org.freedesktop.DBus.ObjectManager", "org.freedesktop.DBus.Properties"] {
            #expect(introspection.stdout.contains(interface), "\(interface) missing")
        }
        let version = try await daemon.run("/usr/bin/gdbus", ["call", "--address", daemon.bus.address, "--dest", Telephony1.busName,
                                                              "--object-path", Telephony1.rootPath.rawValue,
                                                              "--method", "org.freedesktop.DBus.Properties.Get", Telephony1.Manager.interface, "Version"])
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(<'\(Telephony1.version)'>,)")
        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0)
    }

    @Test("a second instance exits with a clear message; --replace takes over")
    func secondInstance() async throws {
        let first = try await RunningDaemon()
        let second = try await first.run(BuiltProducts.path("monkeycalld"), ["--address", first.bus.address])
        #expect(second.status != 0)
        #expect(second.stderr.contains("already owned") && second.stderr.contains("--replace"), "\(second.stderr)")

        let replacement = try ChildProcess(BuiltProducts.path("monkeycalld"), ["--address", first.bus.address, "--replace"],
                                           environment: first.bus.environment)
        #expect(await replacement.waitForOutput(containing: "serving \(Telephony1.busName)"))
        #expect(await first.daemon.waitForExit() == 0)
        #expect(first.daemon.output.contains("another instance took over"))
        replacement.interrupt()
        #expect(await replacement.waitForExit() == 0)
    }

    @Test("bad input from busctl gets the standard errors and the daemon stays up")
    func badInput() async throws {
        let daemon = try await RunningDaemon()
        let address = "--address=\(daemon.bus.address)"
        let root = Telephony1.rootPath.rawValue
        let wrongSignature = try await daemon.run("/usr/bin/busctl", [address, "call", Telephony1.busName, root, Telephony1.Manager.interface, "RegisterProvider", "s", "x"])
        #expect(wrongSignature.status != 0 && wrongSignature.stderr.contains("must be of type 'a{sv}'"), "\(wrongSignature.stderr)")
        let unknownMethod = try await daemon.run("/usr/bin/busctl", [address, "call", Telephony1.busName, root, Telephony1.Manager.interface, "Explode"])
        #expect(unknownMethod.stderr.contains("has no method"), "\(unknownMethod.stderr)")
        let unknownObject = try await daemon.run("/usr/bin/busctl", [address, "call", Telephony1.busName, root + "/Nope", Telephony1.Manager.interface, "Explode"])
        #expect(unknownObject.stderr.contains("no object"), "\(unknownObject.stderr)")
        let unknownInterface = try await daemon.run("/usr/bin/busctl", [address, "call", Telephony1.busName, root, "org.example.Nope", "Explode"])
        #expect(unknownInterface.stderr.contains("has no interface"), "\(unknownInterface.stderr)")
        let status = try await daemon.cli("status")
        #expect(status.status == 0 && status.stdout.contains("is running"))
    }

    @Test("a Python provider and the monkeycall CLI: dial, end, an incoming call answered")
    func pythonProviderAndCLI() async throws {
        let daemon = try await RunningDaemon()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/provider.py").path
        let incoming = UUID().uuidString.lowercased()
        let app = try ChildProcess("/usr/bin/python3", [script, daemon.bus.address, "--incoming", incoming, "bob"], environment: daemon.bus.environment)
        defer { app.kill() }
        #expect(await app.waitForOutput(containing: "ringing \(incoming)"), "\(app.output)")

        let watch = try ChildProcess(BuiltProducts.path("monkeycall"), ["watch", "--json"], environment: daemon.bus.environment)
        defer { watch.kill() }
        #expect(await watch.waitForOutput(containing: "watching"), "\(watch.output)")
        let answer = try await daemon.cli("answer")
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(await app.waitForOutput(containing: "action answer \(incoming)"))
        #expect(await app.waitForOutput(containing: "audio on"))
        #expect(await watch.waitForOutput(containing: #""State":"active""#), "\(watch.output)")
        let calls = try await daemon.cli("calls")
        #expect(calls.stdout.contains("\(incoming)\tactive\tincoming\tPyPhone\tbob"), "\(calls.stdout)")

        // Dialing holds the active call; then end it by UUID.
        let dial = try await daemon.cli("dial", "alice", "--provider", "PyPhone")
        #expect(dial.status == 0, "\(dial.stderr)")
        let outgoing = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: outgoing) != nil)
        #expect(await app.waitForOutput(containing: "action set-held \(incoming)"))
        #expect(await app.waitForOutput(containing: "action start \(outgoing)"))
        #expect(try await daemon.cli("end", outgoing).status == 0)
        #expect(await app.waitForOutput(containing: "action end \(outgoing)"))
        #expect(await watch.waitForOutput(containing: #""event":"removed","path":"\#(Telephony1.callPath(outgoing))""#), "\(watch.output)")

        // With two calls the CLI asks which; errors are plain words and a non-zero status.
        let ambiguous = try await daemon.cli("mute")
        #expect(ambiguous.status == 0 || ambiguous.stderr.contains("name one"))
        let unknown = try await daemon.cli("end", UUID().uuidString)
        #expect(unknown.status != 0 && unknown.stderr.contains("UnknownCallUUID"), "\(unknown.stderr)")
    }

    @Test("the CLI says so when no service runs")
    func noService() async throws {
        let bus = try await PrivateBus.start()
        let status = try await ChildProcess.run(BuiltProducts.path("monkeycall"), ["status"], environment: bus.environment)
        #expect(status.status != 0)
        #expect(status.stderr.contains("not running"), "\(status.stderr)")
    }
}
