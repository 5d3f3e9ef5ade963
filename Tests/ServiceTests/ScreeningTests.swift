import CallHistory
import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

@Suite("Do Not Disturb, silencing and the block list")
struct ScreeningTests {
    static let manager = Telephony1.Manager.interface
    static let directory = Telephony1.CallDirectory.interface

    func set(_ fixture: ServiceFixture, _ name: String, _ value: Bool) async throws {
        try await fixture.root("org.freedesktop.DBus.Properties", "Set", [.string(Self.manager), .string(name), .variant(.bool(value))])
    }

    func lastStatus(_ fixture: ServiceFixture) async throws -> DBusValue? {
        let reply = try await fixture.root(Telephony1.Recents.interface, "List", [.uint32(1), .uint32(0)])
        guard case .array(_, let items)? = reply.first else { return nil }
        return items.first?.vardict?["Status"]
    }

    @Test("Do Not Disturb refuses calls, lets favorites and a repeated call through, and records them as filtered")
    func doNotDisturb() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let changes = try await SignalRecorder(fixture.controller, MatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await set(fixture, "DoNotDisturb", true)
        #expect(await changes.next(where: { $0.count > 1 && $0[1].vardict?["DoNotDisturb"] == .bool(true) }) != nil)

        let refused = await dbusError { try await app.reportIncoming("stranger") }
        #expect(refused?.name == APIError.filteredByDoNotDisturb.rawValue)
        #expect(try await lastStatus(fixture) == .string("filtered"))
        // The same caller again within three minutes rings.
        let repeated = await dbusError { try await app.reportIncoming("stranger") }
        #expect(repeated == nil)

        try await fixture.root(Telephony1.Favorites.interface, "Add", [.string("mum"), .string("generic"), .string("Mum"), .string("Monkey")])
        #expect(await dbusError { try await app.reportIncoming("mum") } == nil)
        // Without the exceptions, both are held back.
        try await set(fixture, "DoNotDisturbAllowFavorites", false)
        try await set(fixture, "DoNotDisturbAllowRepeatedCalls", false)
        #expect(await dbusError { try await app.reportIncoming("mum") }?.name == APIError.filteredByDoNotDisturb.rawValue)
        #expect(await dbusError { try await app.reportIncoming("stranger") }?.name == APIError.filteredByDoNotDisturb.rawValue)
        try await set(fixture, "DoNotDisturb", false)
        #expect(await dbusError { try await app.reportIncoming("newcomer") } == nil)
    }

    @Test("silencing unknown callers refuses them and records a missed call; known callers ring")
    func silenceUnknownCallers() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let known = try await app.reportIncoming("friend")
        try await app.call("ReportCallEnded", [.string(known), .string("remote-ended"), .uint64(0)])
        try await set(fixture, "SilenceUnknownCallers", true)
        #expect(await dbusError { try await app.reportIncoming("friend") } == nil)
        let silenced = await dbusError { try await app.reportIncoming("telemarketer") }
        #expect(silenced?.name == APIError.filteredByDoNotDisturb.rawValue)
        #expect(try await lastStatus(fixture) == .string("missed"))
    }

    @Test("who has called is read from Recents at start, follows the calls that end, and is forgotten when Recents is cleared")
    func knownCallersFollowRecents() async throws {
        let fixture = try await ServiceFixture { options in
            // Recents from an earlier run, where the service will find it.
            let database = URL(fileURLWithPath: options.dataDirectory!).deletingLastPathComponent().appendingPathComponent("monkeycall.sqlite").path
            try! CallHistory(path: database).record(RecentCall(
                callUUID: UUID().uuidString.lowercased(), providerName: "Monkey", handle: "old-friend", handleType: "generic", callerName: "",
                outgoing: true, status: .answered, endReason: "", startedAt: 1, connectedAt: 2, endedAt: 3, hasVideo: false))
        }
        let app = try await fixture.provider("Monkey")
        try await set(fixture, "SilenceUnknownCallers", true)
        let rang = try await app.reportIncoming("old-friend")
        try await app.call("ReportCallEnded", [.string(rang), .string("remote-ended"), .uint64(0)])
        #expect(await dbusError { try await app.reportIncoming("stranger") }?.name == APIError.filteredByDoNotDisturb.rawValue)
        // The silenced call is in Recents: the stranger is known now.
        #expect(await dbusError { try await app.reportIncoming("stranger") } == nil)

        try await fixture.root(Telephony1.Recents.interface, "Clear")
        #expect(await dbusError { try await app.reportIncoming("old-friend") }?.name == APIError.filteredByDoNotDisturb.rawValue)
    }

    @Test("the block list: handles and +44* prefixes, normalised numbers, Identify, BlockedHandles")
    func blockList() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        try await fixture.root(Self.directory, "BlockHandle", [.string("+44*")])
        try await fixture.root(Self.directory, "BlockHandle", [.string("spam@example.org")])
        let bad = await dbusError { try await fixture.root(Self.directory, "BlockHandle", [.string("")]) }
        #expect(bad?.name == DBusError.Name.invalidArgs)
        let blocked = try await fixture.root("org.freedesktop.DBus.Properties", "Get", [.string(Self.directory), .string("BlockedHandles")])
        #expect(blocked.first?.unwrappedVariant == ["+44*", "spam@example.org"].dbusValue)

        let refused = await dbusError { try await app.reportIncoming("+44 (20) 7946-0000", update: ["HandleType": .string("phone-number")]) }
        #expect(refused?.name == APIError.filteredByBlockList.rawValue)
        #expect(try await lastStatus(fixture) == .string("blocked"))
        #expect(await dbusError { try await app.reportIncoming("SPAM@example.org") }?.name == APIError.filteredByBlockList.rawValue)
        #expect(await dbusError { try await app.reportIncoming("+1 555 0100") } == nil)
        #expect(try await fixture.root(Self.directory, "Identify", [.string("tel:+442079460000")]) == [.string(""), .bool(true)])

        try await fixture.root(Self.directory, "UnblockHandle", [.string("+44*")])
        #expect(await dbusError { try await app.reportIncoming("+44 20 7946 0001") } == nil)
        let unknownDirectory = await dbusError { try await fixture.root(Self.directory, "SetDirectoryEnabled", [.string("Nobody"), .bool(false)]) }
        #expect(unknownDirectory?.name == DBusError.Name.invalidArgs)
        #expect(try await fixture.root(Self.directory, "ListDirectories") == [.array(element: "(sbtt)", [])])
    }

    @Test("an invalid settings entry is dropped and named in the log, the others kept (found on main: one bad pattern lost every setting)")
    func invalidSettingsEntries() async throws {
        let daemon = try await RunningDaemon.withData { folder in
            try #"{"doNotDisturb": true, "silenceUnknownCallers": "yes", "doNotDisturbAllowFavorites": false, "blockList": ["+44*", "*", 12, "alice@example.org"]}"#
                .write(to: folder.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        }
        let address = "--address=\(daemon.bus.address)"
        func get(_ interface: String, _ name: String) async throws -> String {
            try await daemon.run("/usr/bin/busctl", [address, "get-property", Telephony1.busName, Telephony1.rootPath.rawValue, interface, name])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await get(Telephony1.Manager.interface, "DoNotDisturb") == "b true")
        #expect(try await get(Telephony1.Manager.interface, "DoNotDisturbAllowFavorites") == "b false")
        #expect(try await get(Telephony1.Manager.interface, "SilenceUnknownCallers") == "b false")
        #expect(try await get(Telephony1.CallDirectory.interface, "BlockedHandles") == #"as 2 "+44*" "alice@example.org""#)
        for named in ["silenceUnknownCallers (not true or false)", "blockList[1] '*'", "blockList[2] (not a string)"] {
            #expect(daemon.daemon.output.contains("dropped the invalid entry \(named)"), "\(named): \(daemon.daemon.output)")
        }
    }

    @Test("a settings change that cannot be saved answers SettingsUnavailable and is undone (found on main: only logged, the call succeeded)")
    func settingsSaveFails() async throws {
        let daemon = try await RunningDaemon.withData { folder in
            // A folder where the file should be: no rename can replace it, even for root.
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("settings.json/x"), withIntermediateDirectories: true)
        }
        let bus = daemon.bus
        let address = "--address=\(bus.address)"
        let root = [Telephony1.busName, Telephony1.rootPath.rawValue]
        let set = try await daemon.run("/usr/bin/busctl", [address, "set-property"] + root + [Telephony1.Manager.interface, "DoNotDisturb", "b", "true"])
        #expect(set.status != 0)
        #expect(set.stderr.contains("The settings cannot be saved"), "\(set.stderr)")
        let dnd = try await daemon.run("/usr/bin/busctl", [address, "get-property"] + root + [Telephony1.Manager.interface, "DoNotDisturb"])
        #expect(dnd.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b false")
        let block = try await daemon.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Telephony1.busName, "--object-path", Telephony1.rootPath.rawValue,
                                                            "--method", Telephony1.CallDirectory.interface + ".BlockHandle", "+1900*"])
        #expect(block.status != 0)
        #expect(block.stderr.contains(APIError.settingsUnavailable.rawValue), "\(block.stderr)")
        let list = try await daemon.run("/usr/bin/busctl", [address, "get-property"] + root + [Telephony1.CallDirectory.interface, "BlockedHandles"])
        #expect(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "as 0")
        #expect(daemon.daemon.output.contains("the change is undone"))
    }

    @Test("settings survive a restart of the daemon")
    func persistence() async throws {
        let bus = try await PrivateBus.start()
        let first = try await RunningDaemon(bus: bus)
        #expect(try await first.cli("dnd", "on").status == 0)
        #expect(try await first.cli("block", "add", "+1900*").status == 0)
        first.daemon.terminate()
        #expect(await first.daemon.waitForExit() == 0)
        let second = try await RunningDaemon(bus: bus)
        let status = try await second.cli("dnd", "status")
        #expect(status.stdout.contains("Do Not Disturb: on"), "\(status.stdout)\(status.stderr)")
        #expect(try await second.cli("block", "list").stdout.contains("+1900*"))
        let identify = try await second.cli("identify", "+1 900 555 0000")
        #expect(identify.stdout.contains("blocked"), "\(identify.stdout)")

        // A directory loaded from a file (unsorted, as people write them) names and blocks, and survives a restart.
        let file = bus.directory.appendingPathComponent("directory.txt")
        try "14085559999,Pizza Place\n14085550002\n14085550001\n".write(to: file, atomically: true, encoding: .utf8)
        // The CLI loads a directory for an app the service knows: here one that runs.
        let pizza = try await TestProvider(bus: bus, name: "Pizza", configuration: [:])
        let load = try await second.cli("directory", "load", "--provider", "Pizza", file.path)
        #expect(load.status == 0 && load.stdout.contains("Pizza: 2 blocked, 1 identified"), "\(load.stdout)\(load.stderr)")
        _ = pizza
        second.daemon.terminate()
        #expect(await second.daemon.waitForExit() == 0)
        let third = try await RunningDaemon(bus: bus)
        #expect(try await third.cli("identify", "+1 408 555 9999").stdout.contains("Pizza Place"))
        #expect(try await third.cli("directory").stdout.contains("Pizza\tenabled\t2\t1"))
        #expect(try await third.cli("directory", "disable", "Pizza").status == 0)
        #expect(try await third.cli("identify", "14085550001").stdout.contains("unknown caller"))
    }
}
