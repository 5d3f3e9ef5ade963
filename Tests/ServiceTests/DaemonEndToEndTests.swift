import CallHistory
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
    /// `owningBus`: a bus passed in is stopped with this daemon.
    init(bus: PrivateBus? = nil, _ extra: [String] = [], environment: [String: String] = [:], owningBus: Bool = false) async throws {
        if let bus { self.bus = bus } else { self.bus = try await PrivateBus.start() }
        ownsBus = bus == nil || owningBus
        // The database, like the bus, lives in the bus's folder unless the test names one.
        let database = extra.contains("--database") ? [] : ["--database", self.bus.directory.appendingPathComponent("monkeycall.sqlite").path]
        // Real timeouts only where a test asks for them (it passes its own): a whole suite on 2 cores
        // can keep a test's app from fulfilling an action within the default 10 s, or its call from
        // being answered within 45 s, and what it tests is not that.
        let patient = (extra.contains("--action-timeout") ? [] : ["--action-timeout", "120"])
            + (extra.contains("--ring-timeout") ? [] : ["--ring-timeout", "600"])
        daemon = try await self.bus.startMonkeycalld(database + patient + extra, environment: environment)
    }

    /// A daemon on a bus of its own whose data folder `prepare` fills first (settings, directories).
    static func withData(_ prepare: (URL) throws -> Void) async throws -> RunningDaemon {
        let bus = try await PrivateBus.start()
        let folder = bus.directory.appendingPathComponent("data/monkeycall")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try prepare(folder)
        return try await RunningDaemon(bus: bus, ["--database", folder.appendingPathComponent("monkeycall.sqlite").path], owningBus: true)
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

    @Test("the user's data is private: umask 077, files 0600 in folders 0700, what an older version left open tightened at start (found on main: 0644 and 0755)")
    func dataIsPrivate() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let folder = bus.directory.appendingPathComponent("data/monkeycall").path
        let manager = FileManager.default
        // As an older version left them.
        try manager.createDirectory(atPath: folder + "/directories", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        chmod(folder, 0o755)
        #expect(manager.createFile(atPath: folder + "/settings.json", contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(manager.createFile(atPath: folder + "/directories/enabled.json", contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644]))
        let daemon = try await RunningDaemon(bus: bus, ["--database", folder + "/monkeycall.sqlite"])
        func mode(_ path: String) -> Int? { (try? manager.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil }
        #expect(mode(folder) == 0o700)
        #expect(mode(folder + "/directories") == 0o700)
        for file in ["settings.json", "directories/enabled.json", "monkeycall.sqlite", "monkeycall.sqlite-wal", "monkeycall.sqlite-shm"] {
            #expect(mode(folder + "/" + file) == 0o600, "\(file): \(String(mode(folder + "/" + file) ?? -1, radix: 8))")
        }
        // A file the daemon makes now is private from the start.
        try manager.removeItem(atPath: folder + "/settings.json")
        let set = try await daemon.run("/usr/bin/busctl", ["--address=\(bus.address)", "set-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                           Telephony1.Manager.interface, "DoNotDisturb", "b", "true"])
        #expect(set.status == 0, "\(set.stderr)")
        let deadline = ContinuousClock.now + .seconds(20)
        while !manager.fileExists(atPath: folder + "/settings.json"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(mode(folder + "/settings.json") == 0o600)
    }

    @Test("without XDG_DATA_HOME or HOME (or with relative ones) the daemon says so and stops, instead of keeping the user's data in /tmp")
    func noDataFolder() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        for (data, home) in [(nil, nil), ("relative/data", nil), (nil, "")] as [(String?, String?)] {
            var environment = bus.environment
            environment["XDG_DATA_HOME"] = data
            environment["HOME"] = home
            let run = try await ChildProcess.run(BuiltProducts.path("monkeycalld"), ["--address", bus.address], environment: environment)
            #expect(run.status == 2)
            #expect(run.stderr.contains("no folder for the user's data") && run.stderr.contains("--database"), "\(run.stderr)")
        }
    }

    @Test("--recents-limit: 0 is refused with a clear message; a limit of 2 keeps the 2 newest calls")
    func recentsLimitOption() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let refused = try await ChildProcess.run(BuiltProducts.path("monkeycalld"), ["--address", bus.address, "--recents-limit", "0"], environment: bus.environment)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--recents-limit must be 1 or more"), "\(refused.stderr)")
        let database = bus.directory.appendingPathComponent("limited.sqlite").path
        do {
            let history = try CallHistory(path: database)
            for index in 1...5 {
                try history.record(RecentCall(callUUID: UUID().uuidString.lowercased(), providerName: "P", handle: "caller\(index)", handleType: "generic",
                                              callerName: "", outgoing: false, status: .answered, endReason: "", startedAt: 100,
                                              connectedAt: 0, endedAt: UInt64(1000 + index), hasVideo: false))
            }
        }
        let daemon = try await RunningDaemon(bus: bus, ["--database", database, "--recents-limit", "2"])
        let list = try await daemon.run("/usr/bin/busctl", ["--address=\(bus.address)", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                            Telephony1.Recents.interface, "List", "uu", "10", "0"])
        #expect(list.stdout.hasPrefix("aa{sv} 2 "), "\(list.stdout)")
        #expect(list.stdout.contains("caller5") && list.stdout.contains("caller4") && !list.stdout.contains("caller3"))
    }

    @Test("a second instance that does not get the name leaves the first one's temporary files; the owner removes leftovers (found on main: the second deleted them)")
    func temporaryFilesOnlyOnceOwned() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let folder = bus.directory.appendingPathComponent("data/monkeycall").path
        let database = ["--database", folder + "/monkeycall.sqlite"]
        let first = try await RunningDaemon(bus: bus, database)
        // As the first one's saves in progress would have them.
        let inProgress = [folder + "/directories/.50.mcdir.123.456.tmp", folder + "/.settings.json.123.456.tmp"]
        for file in inProgress { #expect(FileManager.default.createFile(atPath: file, contents: Data("partial".utf8))) }
        let second = try await first.run(BuiltProducts.path("monkeycalld"), ["--address", bus.address] + database)
        #expect(second.status != 0 && second.stderr.contains("already owned"))
        for file in inProgress { #expect(FileManager.default.fileExists(atPath: file), "\(file) was deleted") }

        first.daemon.terminate()
        #expect(await first.daemon.waitForExit() == 0)
        // Left by a crash: the next owner removes them once it has the name.
        let next = try await RunningDaemon(bus: bus, database)
        let deadline = ContinuousClock.now + .seconds(20)
        while inProgress.contains(where: FileManager.default.fileExists), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        for file in inProgress { #expect(!FileManager.default.fileExists(atPath: file), "\(file) was left") }
        _ = next
    }

    @Test("SIGTERM with calls up: each ends (failed), its app hears DidReset, and each is in Recents after a restart (found on main: none recorded)")
    func callsUpAtSigterm() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let database = ["--database", bus.directory.appendingPathComponent("data/monkeycall/monkeycall.sqlite").path]
        let daemon = try await RunningDaemon(bus: bus, database)
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        let active = try await app.reportIncoming("alice")
        _ = try await app.reportIncoming("bob")
        let user = try Connection(address: bus.address)
        _ = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(active), interface: Telephony1.Call.interface, member: "Answer", [])
        try await app.perform("answer")

        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0)
        #expect(await app.signals.next("DidReset") != nil)
        #expect(daemon.daemon.output.contains("the calls still up have ended; 1 app(s) told"), "\(daemon.daemon.output)")

        let restarted = try await RunningDaemon(bus: bus, database)
        let list = try await restarted.run("/usr/bin/busctl", ["--address=\(bus.address)", "--json=short", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                               Telephony1.Recents.interface, "List", "uu", "10", "0"])
        #expect(list.stdout.contains(#""Handle":{"type":"s","data":"alice"}"#) && list.stdout.contains(#""Handle":{"type":"s","data":"bob"}"#), "\(list.stdout)")
        #expect(list.stdout.components(separatedBy: #""EndReason":{"type":"s","data":"failed"}"#).count == 3, "\(list.stdout)")
        #expect(list.stdout.contains(#""Status":{"type":"s","data":"answered"}"#))
    }

    @Test("outside text reaches the log cleaned: no ESC to recolour a terminal, no newline to fake a line (found on main: both passed)")
    func logLinesAreClean() async throws {
        let daemon = try await RunningDaemon.withData { folder in
            // A pattern that is no pattern, which the daemon logs as it drops it.
            let settings = try JSONEncoder().encode(["blockList": ["\u{1B}[31mEvil\nmonkeycalld : [TelephonyService] critical: fake\u{202E}*"]])
            try settings.write(to: folder.appendingPathComponent("settings.json"))
        }
        let output = daemon.daemon.output
        #expect(output.contains("[31mEvil monkeycalld"), "\(output)")
        #expect(!output.contains("\u{1B}") && !output.contains("\u{202E}"), "\(output)")
        #expect(!output.split(separator: "\n").contains { $0.hasPrefix("monkeycalld : [TelephonyService] critical") }, "\(output)")
    }

    @Test("a second instance exits with a clear message; no app can take the name over; losing the bus is an error exit")
    func secondInstance() async throws {
        let first = try await RunningDaemon()
        let second = try await first.run(BuiltProducts.path("monkeycalld"), ["--address", first.bus.address])
        #expect(second.status != 0)
        #expect(second.stderr.contains("already owned") && second.stderr.contains("systemctl --user restart"), "\(second.stderr)")

        // An app that asks for the name with REPLACE_EXISTING gets nothing: the service never allows replacement.
        let rogue = try Connection(address: first.bus.address)
        #expect(try await rogue.requestName(Telephony1.busName, replace: true) == .exists)
        #expect(try await rogue.nameOwner(Telephony1.busName) != rogue.uniqueName)
        let ping = try await rogue.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Peer", member: "Ping")
        #expect(ping.isEmpty && first.daemon.isRunning)

        // Without its bus the service cannot serve: status 1, so that systemd's Restart=on-failure brings it back.
        first.bus.stop()
        #expect(await first.daemon.waitForExit() == 1, "\(first.daemon.output)")
        #expect(first.daemon.output.contains("lost the connection to the bus"), "\(first.daemon.output)")
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
        let status = try await bus.monkeycall(["status"])
        #expect(status.status != 0)
        #expect(status.stderr.contains("not running"), "\(status.stderr)")
    }
}
