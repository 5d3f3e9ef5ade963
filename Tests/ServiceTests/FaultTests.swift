import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Faults a desktop really has: an app killed mid-call, the notification
/// server crashing, the database going read-only, the bus restarting. The
/// service survives each, ends what must end, and loses nothing else.
@Suite("Faults")
struct FaultTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/provider.py").path
    static let objectManager = "org.freedesktop.DBus.ObjectManager"

    /// The Python provider (PyPhone) in a process of its own, so that killing it is real.
    static func pythonProvider(_ bus: PrivateBus, _ arguments: [String]) async throws -> (ChildProcess, ObjectPath) {
        let app = try ChildProcess("/usr/bin/python3", [script, bus.address] + arguments, environment: bus.environment)
        guard await app.waitForOutput(containing: "registered "),
              let line = app.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("registered ") }) else {
            throw TestSupportError("the Python provider did not register: \(app.output)")
        }
        return (app, try ObjectPath(String(line.dropFirst("registered ".count))))
    }

    static func string(_ value: DBusValue?) -> String? { if case .string(let text)? = value { text } else { nil } }

    /// The states a call of a killed provider can be in, and what Recents then calls it.
    enum KilledIn: String, CaseIterable, Sendable {
        case ringing, connecting, active, held, pendingAnswer
        var status: String { self == .active || self == .held ? "answered" : "failed" }
        /// The call's State when the provider is killed.
        var callState: String { self == .pendingAnswer ? "ringing" : rawValue }
        /// Whether the other app's active call was held for the killed app's call.
        var holdsTheOtherCall: Bool { self != .ringing }
    }

    @Test("a provider SIGKILLed with a call in each state: the call ends as failed and is recorded, the call held for it resumes, nothing is left",
          arguments: KilledIn.allCases)
    func providerKilled(_ state: KilledIn) async throws {
        let fixture = try await ServiceFixture()
        let removed = try await SignalRecorder(fixture.controller, MatchRule(interface: Self.objectManager, member: "InterfacesRemoved"))
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: Telephony1.Recents.interface, member: "EntryAdded"))
        // Another app with an active call, which the killed app's call holds.
        let other = try await fixture.provider("Other")
        let otherCall = try await other.reportIncoming("olive")
        try await fixture.control("AnswerCall", [.string(otherCall)])
        try await other.perform("answer")

        let uuid: String
        var pending: String?
        let (app, appPath): (ChildProcess, ObjectPath)
        switch state {
        case .ringing, .active, .held, .pendingAnswer:
            uuid = UUID().uuidString.lowercased()
            (app, appPath) = try await Self.pythonProvider(fixture.bus, ["--incoming", uuid, "bob"] + (state == .pendingAnswer ? ["--keep", "answer"] : []))
            #expect(await app.waitForOutput(containing: "ringing \(uuid)"), "\(app.output)")
            guard state != .ringing else { break }
            let transaction = try await fixture.control("AnswerCall", [.string(uuid)])
            try await other.perform("set-held")
            if state == .pendingAnswer {
                #expect(await app.waitForOutput(containing: "kept answer \(uuid)"), "\(app.output)")
                pending = Self.string(transaction.first)
            } else {
                #expect(await fixture.completion(of: try #require(Self.string(transaction.first)))?.0 == true)
            }
            if state == .held {
                let hold = try await fixture.control("SetHeld", [.string(uuid), .bool(true)])
                #expect(await fixture.completion(of: try #require(Self.string(hold.first)))?.0 == true)
            }
        case .connecting:
            (app, appPath) = try await Self.pythonProvider(fixture.bus, ["--connecting"])
            let reply = try await fixture.control("StartCall", [.string("dave"), .vardict(["Provider": .objectPath(appPath)])])
            uuid = try #require(Self.string(reply.first))
            try await other.perform("set-held")
            #expect(await app.waitForOutput(containing: "connecting \(uuid)"), "\(app.output)")
        }
        defer { app.kill() }
        #expect(await fixture.state(uuid) == state.callState)
        #expect(await fixture.state(otherCall) == (state.holdsTheOtherCall ? "held" : "active"))

        app.kill()
        // The call goes, then the provider.
        #expect(await removed.next(where: { $0.first == .objectPath(Telephony1.callPath(uuid)) }) != nil)
        #expect(await removed.next(where: { $0.first == .objectPath(appPath) }) != nil)
        let entry = try #require(await added.next(where: { $0.first?.vardict?["CallUUID"] == .string(uuid) })?.arguments().first?.vardict)
        #expect(entry["EndReason"] == .string("failed"))
        #expect(entry["Status"] == .string(state.status))
        if let pending {
            let completion = await fixture.completion(of: pending)
            #expect(completion?.0 == false && completion?.1 == APIError.actionFailed.rawValue, "\(String(describing: completion))")
        }
        if state.holdsTheOtherCall {
            let resume = try #require(await other.nextAction("set-held"))
            #expect(resume.call == otherCall && resume.args["OnHold"] == .bool(false))
            try await other.fulfill(resume)
        }
        #expect(await fixture.state(otherCall) == "active")
        // Nothing of the killed app is left.
        #expect(Set(try await fixture.managedPaths()) == [other.path, Telephony1.callPath(otherCall)])
    }

    @Test("the notification server dies mid-ring: the call still rings and is answered; a new server shows the next call")
    func notificationServerKilled() async throws {
        // Without the call controls: the answered call's ongoing notification would come first.
        let daemon = try await RunningDaemon(["--no-call-controls"])
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let ringing = try await app.reportIncoming("alice")
        #expect(await server.notified.next()?.body == "alice")

        server.stop() // its connection closes, as when the process dies
        let calls = try await daemon.cli("calls")
        #expect(calls.stdout.contains("\(ringing)\tringing"), "\(calls.stdout)")
        let answer = try await daemon.cli("answer", ringing)
        #expect(answer.status == 0, "\(answer.stderr)")
        try await app.perform("answer")
        #expect(try await daemon.cli("calls").stdout.contains("\(ringing)\tactive"))

        let replacement = try await NotificationServer(address: daemon.bus.address)
        try await app.reportIncoming("bob")
        let shown = try #require(await replacement.notified.next())
        #expect(shown.body == "bob" && Self.actionIDs(shown).contains("answer"))
        try replacement.invoke(shown.id, "decline")
        #expect(try await app.nextAction("end") != nil)
    }

    /// Makes files read-only even for root, whose writes ignore permission bits: the
    /// immutable attribute stops writes through descriptors already open, too.
    /// Without root (no CAP_LINUX_IMMUTABLE) a running daemon's open files cannot be
    /// made read-only at all, so the test needs root (CI runs as root). Synchronous,
    /// so that a `defer` can undo it: the bus's folder must stay removable.
    /// Whether this machine lets the test make a file immutable (a container may not, even as root).
    static let canMakeImmutable: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-immutable-\(getpid())").path
        guard FileManager.default.createFile(atPath: probe, contents: nil) else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? setImmutable(true, [probe])) != nil else { return false }
        try? setImmutable(false, [probe])
        return true
    }()

    static func setImmutable(_ on: Bool, _ paths: [String]) throws {
        let chattr = Process()
        chattr.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        chattr.arguments = [on ? "+i" : "-i"] + paths
        try chattr.run()
        chattr.waitUntilExit()
        guard chattr.terminationStatus == 0 else { throw TestSupportError("chattr \(chattr.arguments!.joined(separator: " ")) failed") }
    }

    @Test("the database turns read-only while the daemon runs: calls still work, Recents says why, and records again once writable",
          .enabled(if: canMakeImmutable, "making open files read-only needs root with CAP_LINUX_IMMUTABLE (chattr +i)"))
    func readOnlyDatabase() async throws {
        let bus = try await PrivateBus.start()
        let folder = bus.directory.appendingPathComponent("history")
        let database = folder.appendingPathComponent("monkeycall.sqlite").path
        let daemon = try await RunningDaemon(bus: bus, ["--database", database])
        let watcher = try Connection(address: bus.address)
        let added = try await SignalRecorder(watcher, MatchRule(interface: Telephony1.Recents.interface, member: "EntryAdded"))
        try await watcher.subscribeToTelephony()
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        func call(_ handle: String) async throws -> String {
            let uuid = try await app.reportIncoming(handle)
            #expect(try await daemon.cli("answer", uuid).status == 0)
            try await app.perform("answer")
            #expect(try await daemon.cli("end", uuid).status == 0)
            try await app.perform("end")
            return uuid
        }
        func recents(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await watcher.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Recents.interface,
                                   member: member, arguments)
        }
        let first = try await call("alice")
        #expect(await added.next(where: { $0.first?.vardict?["CallUUID"] == .string(first) }) != nil)

        // The database, its write-ahead log and their folder: every write now fails. Not the
        // wal-index (-shm): SQLite maps it into memory, and a write fault on a mapping is
        // SIGBUS for any program; no disk does that to a file already open for writing
        // (a read-only remount is refused while one is).
        let files = [folder.path, database, database + "-wal"]
        try Self.setImmutable(true, files)
        defer { try? Self.setImmutable(false, files) }

        let lost = try await call("bob")
        #expect(await daemon.daemon.waitForOutput(containing: "Recents cannot record calls (calls still work); first lost: \(lost)"), "\(daemon.daemon.output)")
        let refused = await dbusError { _ = try await recents("Clear") }
        #expect(refused?.name == APIError.recentsUnavailable.rawValue, "\(String(describing: refused))")
        #expect(refused?.message.contains(database) == true, "\(String(describing: refused?.message))")
        // What was recorded can still be read.
        guard case .array(_, let entries)? = try await recents("List", [.uint32(10), .uint32(0)]).first else { Issue.record("no list"); return }
        #expect(entries.compactMap { $0.vardict?["CallUUID"] } == [.string(first)])
        #expect(try await daemon.cli("status").status == 0)

        try Self.setImmutable(false, files)
        let again = try await call("carol")
        #expect(await added.next(where: { $0.first?.vardict?["CallUUID"] == .string(again) }) != nil)
        #expect(await daemon.daemon.waitForOutput(containing: "Recents records calls again"))
        #expect(daemon.daemon.isRunning)
    }

    /// Another program with the database's write lock, as `sqlite3` in a terminal or a backup
    /// tool holds it: taken at once, given back on SIGINT.
    static let lockScript = """
        import signal, sqlite3, sys
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        connection = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
        connection.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        signal.sigwait({signal.SIGINT})
        connection.execute("COMMIT")
        print("unlocked", flush=True)
        """

    @Test("another process holds the database locked: calls go on, Recents reads answer, and the calls that ended meanwhile are recorded, in order, once it lets go")
    func lockedDatabase() async throws {
        let fixture = try await ServiceFixture()
        let added = try await SignalRecorder(fixture.controller, Telephony1.Recents.entryAdded.matchRule)
        let app = try await fixture.provider("Monkey")
        func list() async throws -> [DBusValue] {
            guard case .array(_, let entries)? = try await fixture.root(Telephony1.Recents.interface, "List", [.uint32(10), .uint32(0)]).first else { return [] }
            return entries.compactMap { $0.vardict?["CallUUID"] }
        }
        let locker = try ChildProcess("/usr/bin/python3", ["-c", Self.lockScript, fixture.databasePath])
        defer { locker.kill() }
        #expect(await locker.waitForOutput(containing: "locked\n"), "\(locker.output)")

        let missed = try await app.reportIncoming("alice")
        try await app.call("ReportCallEnded", [.string(missed), .string("unanswered"), .uint64(0)])
        #expect(await fixture.warnings.next(where: { $0.contains("Recents waits for another program's lock") }) != nil)
        // Calls go on meanwhile: one rings, is answered and ends.
        let answered = try await app.reportIncoming("bob")
        try await fixture.control("AnswerCall", [.string(answered)])
        try await app.perform("answer")
        try await fixture.control("EndCall", [.string(answered)])
        try await app.perform("end")
        #expect(await fixture.state(answered) == nil)
        // Reads answer; nothing could be written yet.
        #expect(try await list().isEmpty)
        #expect(added.buffer.all.isEmpty)

        locker.interrupt()
        #expect(await locker.waitForOutput(containing: "unlocked"), "\(locker.output)")
        let first = try #require(await added.next()?.arguments().first?.vardict)
        let second = try #require(await added.next()?.arguments().first?.vardict)
        #expect(first["CallUUID"] == .string(missed) && first["Status"] == .string("missed"))
        #expect(second["CallUUID"] == .string(answered) && second["Status"] == .string("answered"))
        #expect(try await list() == [.string(answered), .string(missed)])
        let missedCount = try await fixture.root("org.freedesktop.DBus.Properties", "Get", [.string(Telephony1.Recents.interface), .string("MissedCount")])
        #expect(missedCount.first?.unwrappedVariant == .uint32(1))
    }

    @Test("the bus goes away: the daemon exits with status 1 (systemd restarts it) and says why; on the new bus, D-Bus activation starts it again with its Recents")
    func busRestarted() async throws {
        // The activation file from dbus/, pointed at the built daemon, shared by both buses.
        let services = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-services-\(UUID().uuidString.prefix(8))")
        let data = services.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: services) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let template = try String(contentsOf: root.appendingPathComponent("dbus/\(Telephony1.busName).service"), encoding: .utf8)
        try template.replacingOccurrences(of: "@bindir@", with: BuiltProducts.directory.path)
            .write(to: services.appendingPathComponent("\(Telephony1.busName).service"), atomically: true, encoding: .utf8)
        // The activated daemon finds its bus through DBUS_STARTER_ADDRESS, never a session bus of the test's own.
        let environment = ["XDG_DATA_HOME": data.path, "DBUS_SESSION_BUS_ADDRESS": ""]

        let first = try await PrivateBus.start(environment: environment, servicesDirectory: services)
        let database = data.appendingPathComponent("monkeycall/monkeycall.sqlite").path
        let daemon = try await RunningDaemon(bus: first, ["--database", database])
        let app = try await TestProvider(bus: first, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])

        first.stop()
        #expect(await daemon.daemon.waitForExit() == 1)
        #expect(daemon.daemon.output.contains("stopping: lost the connection to the bus"), "\(daemon.daemon.output)")

        let second = try await PrivateBus.start(environment: environment, servicesDirectory: services)
        defer { second.stop() }
        let probe = try Connection(address: second.address)
        #expect(try await probe.nameOwner(Telephony1.busName) == nil)
        // The first call to the name starts the daemon.
        let reply = try await probe.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Recents.interface,
                                         member: "List", [.uint32(10), .uint32(0)])
        guard case .array(_, let entries)? = reply.first else { Issue.record("no list"); return }
        #expect(entries.compactMap { $0.vardict?["CallUUID"] } == [.string(uuid)])
        let again = try await TestProvider(bus: second, name: "Monkey", configuration: [:])
        let call = try await again.reportIncoming("bob")
        #expect(try await probe.call(destination: Telephony1.busName, path: Telephony1.callPath(call), interface: "org.freedesktop.DBus.Properties",
                                     member: "Get", [.string(Telephony1.Call.interface), .string("State")]).first?.unwrappedVariant == .string("ringing"))
    }

    static func actionIDs(_ notification: NotificationServer.Notification) -> [String] {
        stride(from: 0, to: notification.actions.count, by: 2).map { notification.actions[$0] }
    }
}
