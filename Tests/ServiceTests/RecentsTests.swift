import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

@Suite("Recents and Favorites over the bus")
struct RecentsTests {
    static let recents = Telephony1.Recents.interface
    static let favorites = Telephony1.Favorites.interface

    func entries(_ fixture: ServiceFixture, limit: UInt32 = 50, offset: UInt32 = 0) async throws -> [[String: DBusValue]] {
        let reply = try await fixture.root(Self.recents, "List", [.uint32(limit), .uint32(offset)])
        guard case .array(_, let items)? = reply.first else { return [] }
        return items.compactMap(\.vardict)
    }

    func missedCount(_ fixture: ServiceFixture) async throws -> DBusValue? {
        try await fixture.controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Properties",
                                          member: "Get", [.string(Self.recents), .string("MissedCount")]).first?.unwrappedVariant
    }

    @Test("each status comes from a real call flow, newest first, with EntryAdded")
    func statuses() async throws {
        let fixture = try await ServiceFixture(manualClock: true)
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: Self.recents, member: "EntryAdded"))
        let app = try await fixture.provider("Monkey")
        func nextStatus() async -> DBusValue? { try? await added.next()?.arguments().first?.vardict?["Status"] }

        // answered: answered, then ended by the user.
        let answered = try await app.reportIncoming("alice")
        try await fixture.control("AnswerCall", [.string(answered)])
        try await app.perform("answer")
        try await fixture.control("EndCall", [.string(answered)])
        try await app.perform("end")
        #expect(await nextStatus() == .string("answered"))
        // declined: ended while it rang.
        let declined = try await app.reportIncoming("bob")
        try await fixture.control("EndCall", [.string(declined)])
        try await app.perform("end")
        #expect(await nextStatus() == .string("declined"))
        // missed: the ring timeout, on the manual clock (no other call rings meanwhile).
        try await app.reportIncoming("carol")
        await fixture.advanceClock(by: 45)
        try await app.perform("end")
        #expect(await nextStatus() == .string("missed"))
        // cancelled: an outgoing call ended before it connected.
        let reply = try await fixture.control("StartCall", [.string("dave"), .vardict([:])])
        try await app.perform("start")
        guard case .string(let outgoing) = reply[0] else { return }
        try await fixture.control("EndCall", [.string(outgoing)])
        try await app.perform("end")
        #expect(await nextStatus() == .string("cancelled"))
        // failed: the provider reports a failure.
        let failed = try await app.reportIncoming("erin")
        try await app.call("ReportCallEnded", [.string(failed), .string("failed"), .uint64(0)])
        #expect(await nextStatus() == .string("failed"))

        let list = try await entries(fixture)
        #expect(list.map { $0["Handle"] } == ["erin", "dave", "carol", "bob", "alice"].map { DBusValue.string($0) })
        #expect(list[2]["EndReason"] == .string("unanswered"))
        #expect(list[1]["Outgoing"] == .bool(true))
        #expect(try await entries(fixture, limit: 2, offset: 1).map { $0["Handle"] } == [.string("dave"), .string("carol")])
        #expect(try await missedCount(fixture) == .uint32(1))
        try await fixture.root(Self.recents, "MarkAllSeen")
        #expect(try await missedCount(fixture) == .uint32(0))
        try await fixture.root(Self.recents, "Delete", [list[0]["Id"]!])
        #expect(try await entries(fixture).count == 4)
        try await fixture.root(Self.recents, "Clear")
        #expect(try await entries(fixture).isEmpty)
    }

    @Test("a page listed again shows every write made since: a call recorded, MarkAllSeen, Delete, Clear, a favorite added and removed (the last page is kept only while nothing is written, issue 55)")
    func listedAgainAfterEachWrite() async throws {
        let fixture = try await ServiceFixture()
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: Self.recents, member: "EntryAdded"))
        let app = try await fixture.provider("Monkey")
        func missed(_ handle: String) async throws {
            let uuid = try await app.reportIncoming(handle)
            try await app.call("ReportCallEnded", [.string(uuid), .string("unanswered"), .uint64(0)])
            #expect(await added.next() != nil)
        }
        try await missed("alice")
        #expect(try await entries(fixture).map { $0["Handle"] } == [.string("alice")])
        #expect(try await entries(fixture).map { $0["Handle"] } == [.string("alice")])
        try await missed("bob")
        #expect(try await entries(fixture).map { $0["Handle"] } == [.string("bob"), .string("alice")])
        #expect(try await entries(fixture).map { $0["Seen"] } == [.bool(false), .bool(false)])
        try await fixture.root(Self.recents, "MarkAllSeen")
        #expect(try await entries(fixture).map { $0["Seen"] } == [.bool(true), .bool(true)])
        let newest = try #require(try await entries(fixture).first?["Id"])
        try await fixture.root(Self.recents, "Delete", [newest])
        #expect(try await entries(fixture).map { $0["Handle"] } == [.string("alice")])
        try await fixture.root(Self.recents, "Clear")
        #expect(try await entries(fixture).isEmpty)

        func favorites() async throws -> [DBusValue?] {
            guard case .array(_, let items)? = try await fixture.root(Self.favorites, "List").first else { return [nil] }
            return items.map { $0.vardict?["Name"] }
        }
        #expect(try await favorites().isEmpty)
        let id = try await fixture.root(Self.favorites, "Add", [.string("+15559876"), .string("phone-number"), .string("Mum"), .string("Monkey")])
        #expect(try await favorites() == [.string("Mum")])
        try await fixture.root(Self.favorites, "Remove", id)
        #expect(try await favorites().isEmpty)
    }

    @Test("at the limit the oldest entry goes; a missed call dropped so changes MissedCount, announced (found on main: no limit)")
    func limitDropsTheOldest() async throws {
        let fixture = try await ServiceFixture { $0.recentsLimit = 1 }
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: Self.recents, member: "EntryAdded"))
        let changes = try await SignalRecorder(fixture.controller, MatchRule(path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Properties",
                                                                            member: "PropertiesChanged"))
        let app = try await fixture.provider("Monkey")
        let missed = try await app.reportIncoming("carol")
        try await app.call("ReportCallEnded", [.string(missed), .string("unanswered"), .uint64(0)])
        #expect(await added.next() != nil)
        #expect(try await missedCount(fixture) == .uint32(1))
        let failed = try await app.reportIncoming("erin")
        try await app.call("ReportCallEnded", [.string(failed), .string("failed"), .uint64(0)])
        #expect(await added.next() != nil)
        #expect(try await entries(fixture).map { $0["Handle"] } == [.string("erin")])
        #expect(try await missedCount(fixture) == .uint32(0))
        let announced = await changes.next { arguments in arguments.dropFirst().first?.vardict?["MissedCount"] == .uint32(0) }
        #expect(announced != nil)
    }

    @Test("a provider that keeps its calls out of Recents is not recorded")
    func includesCallsInRecents() async throws {
        let fixture = try await ServiceFixture()
        let quiet = try await fixture.provider("Quiet", ["IncludesCallsInRecents": .bool(false)])
        let uuid = try await quiet.reportIncoming()
        try await quiet.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        let loud = try await fixture.provider("Loud")
        let other = try await loud.reportIncoming()
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: Self.recents, member: "EntryAdded"))
        try await loud.call("ReportCallEnded", [.string(other), .string("remote-ended"), .uint64(0)])
        #expect(await added.next() != nil)
        #expect(try await entries(fixture).map { $0["ProviderName"] } == [.string("Loud")])
    }

    @Test("CallBack and Favorites.Call reach the provider as a start; favorites name callers")
    func callBackAndFavorites() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let uuid = try await app.reportIncoming("+15551234", update: ["HandleType": .string("phone-number")])
        try await app.call("ReportCallEnded", [.string(uuid), .string("unanswered"), .uint64(0)])
        let entry = try #require(try await entries(fixture).first)
        #expect(entry["Status"] == .string("missed"))
        let back = try await fixture.root(Self.recents, "CallBack", [entry["Id"]!])
        let start = try #require(await app.nextAction("start"))
        #expect(back == [.string(start.call)])
        #expect(start.args["Handle"] == .string("+15551234") && start.args["HandleType"] == .string("phone-number"))

        let id = try await fixture.root(Self.favorites, "Add", [.string("+15559876"), .string("phone-number"), .string("Mum"), .string("Monkey")])
        let ringing = try await app.reportIncoming("+15559876")
        #expect(try await fixture.callProperty(ringing, "CallerName") == .string("Mum"))
        let list = try await fixture.root(Self.favorites, "List")
        guard case .array(_, let favorites)? = list.first else { Issue.record("no list"); return }
        #expect(favorites.first?.vardict?["Name"] == .string("Mum"))
        try await fixture.root(Self.favorites, "Call", [id[0]])
        #expect(try await app.nextAction("start")?.args["Handle"] == .string("+15559876"))

        // Without the provider: NoProvider. Unknown ids: InvalidArgs.
        try await app.call("Invalidate")
        let noProvider = await dbusError { try await fixture.root(Self.favorites, "Call", [id[0]]) }
        #expect(noProvider?.name == APIError.noProvider.rawValue)
        let unknown = await dbusError { try await fixture.root(Self.recents, "CallBack", [.uint64(999_999)]) }
        #expect(unknown?.name == DBusError.Name.invalidArgs)
        try await fixture.root(Self.favorites, "Remove", [id[0]])
        let removedTwice = await dbusError { try await fixture.root(Self.favorites, "Remove", [id[0]]) }
        #expect(removedTwice?.name == DBusError.Name.invalidArgs)
    }

    @Test("a database that cannot be opened: calls still work, Recents says why")
    func unusableDatabase() async throws {
        let bus = try await PrivateBus.start()
        let notADatabase = bus.directory.appendingPathComponent("corrupt.sqlite")
        try Data(repeating: 0x42, count: 8192).write(to: notADatabase)
        let daemon = try await RunningDaemon(bus: bus, ["--database", notADatabase.path])
        #expect(daemon.daemon.output.contains("Recents and Favorites are unavailable"))
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming()
        let answer = try await daemon.cli("answer", uuid)
        #expect(answer.status == 0, "\(answer.stderr)")
        let probe = try Connection(address: bus.address)
        let error = await dbusError {
            _ = try await probe.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Self.recents, member: "List", [.uint32(5), .uint32(0)])
        }
        #expect(error?.name == APIError.recentsUnavailable.rawValue)
    }

    @Test("SIGKILL while calls end: every entry announced by EntryAdded survives, and the file is sound")
    func durability() async throws {
        let bus = try await PrivateBus.start()
        let database = bus.directory.appendingPathComponent("durable.sqlite").path
        // Calls end as fast as one app can report them: the flood guard, which would slow it down, is off.
        let daemon = try await RunningDaemon(bus: bus, ["--database", database, "--incoming-call-rate", "0"])
        let watcher = try Connection(address: bus.address)
        let added = try await SignalRecorder(watcher, MatchRule(interface: Self.recents, member: "EntryAdded"))
        try await watcher.subscribeToTelephony()
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        // End calls in a loop from another task; kill the daemon in the middle of it.
        let ender = Task {
            for index in 0..<10_000 {
                guard let uuid = try? await app.reportIncoming("caller\(index)") else { return }
                _ = try? await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
            }
        }
        // Twenty announced before the kill, each waited for (a minute at most: the suite loads 2 cores).
        for index in 0..<20 {
            guard await added.next(timeout: .seconds(60)) != nil else { Issue.record("entry \(index + 1) was never announced"); break }
        }
        daemon.daemon.kill()
        _ = await daemon.daemon.waitForExit()
        ender.cancel()
        func uuid(_ entry: DBusValue?) -> String? { if case .string(let uuid)? = entry?.vardict?["CallUUID"] { uuid } else { nil } }
        let announced = Set(added.buffer.all.compactMap { uuid((try? $0.arguments())?.first) })
        #expect(announced.count >= 20)

        let restarted = try await RunningDaemon(bus: bus, ["--database", database])
        let reply = try await watcher.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Self.recents,
                                           member: "List", [.uint32(10_000), .uint32(0)])
        guard case .array(_, let items)? = reply.first else { Issue.record("no list"); return }
        let stored = Set(items.compactMap(uuid))
        #expect(announced.isSubset(of: stored), "lost: \(announced.subtracting(stored).count)")
        let check = try await ChildProcess.run("/usr/bin/python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", database])
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "\(check.stderr)")
        _ = restarted
    }
}

@Suite("monkeycall recents, callback and favorites")
struct HistoryCLITests {
    @Test func cliCommands() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        try await app.call("ReportCallEnded", [.string(uuid), .string("unanswered"), .uint64(0)])
        let other = try await app.reportIncoming("bob")
        try await app.call("ReportCallEnded", [.string(other), .string("declined-elsewhere"), .uint64(0)])

        let missed = try await daemon.cli("recents", "--missed")
        #expect(missed.status == 0 && missed.stdout.contains("missed\tincoming\tMonkey\talice") && !missed.stdout.contains("bob"), "\(missed.stdout)\(missed.stderr)")
        let json = try await daemon.cli("recents", "--json", "--limit", "1")
        // One JSON document: an array of entries.
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(entries.count == 1)
        let object = try #require(entries.first)
        #expect(object["Handle"] as? String == "bob" && object["Status"] as? String == "declined")
        let id = try #require(missed.stdout.split(separator: "\t").first.map(String.init))

        let back = try await daemon.cli("callback", id)
        #expect(back.status == 0, "\(back.stderr)")
        let backStart = try #require(await app.nextAction("start"))
        #expect(backStart.args["Handle"] == .string("alice"))
        try await app.call("FailAction", [.string(backStart.id), .vardict([:])])

        let added = try await daemon.cli("favorites", "add", "Mum", "+15559876", "--provider", "Monkey", "--handle-type", "phone-number")
        let favorite = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("favorites").stdout.contains("Mum\t+15559876\tMonkey"))
        #expect(try await daemon.cli("favorites", "call", favorite).status == 0)
        let favoriteStart = try #require(await app.nextAction("start"))
        #expect(favoriteStart.args["Handle"] == .string("+15559876"))
        try await app.call("FailAction", [.string(favoriteStart.id), .vardict([:])])
        #expect(try await daemon.cli("favorites", "remove", favorite).status == 0)
        let none = try await daemon.cli("favorites")
        #expect(none.stdout.isEmpty && none.stderr.contains("no favorites"), "\(none.stdout)\(none.stderr)")
        // Both calls above ended now (their start actions failed), not when their actions
        // time out (10 s): on a slow machine that came after `recents clear` and was recorded.
        #expect(try await daemon.cli("recents", "clear").status == 0)
        let cleared = try await daemon.cli("recents")
        #expect(cleared.stdout.isEmpty && cleared.stderr.contains("no recent calls"), "\(cleared.stdout)\(cleared.stderr)")
    }
}
