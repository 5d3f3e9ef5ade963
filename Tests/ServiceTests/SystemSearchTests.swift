import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The Phone app (`org.monkeycall.Phone`), played by a Python program that the bus starts on the
/// first call to that name (D-Bus activation, as the installed app is started) and that records
/// each `org.freedesktop.Application` action it is asked for.
final class PhoneStandIn: @unchecked Sendable {
    static let script = """
        import dbus, dbus.service, dbus.mainloop.glib, json
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        asked = []

        class Phone(dbus.service.Object):
            @dbus.service.method("org.freedesktop.Application", in_signature="a{sv}", out_signature="")
            def Activate(self, platform):
                asked.append({"action": "", "parameter": [], "platform": {str(k): str(v) for k, v in platform.items()}})

            @dbus.service.method("org.freedesktop.Application", in_signature="sava{sv}", out_signature="")
            def ActivateAction(self, name, parameter, platform):
                asked.append({"action": str(name), "parameter": [str(p) for p in parameter],
                              "platform": {str(k): str(v) for k, v in platform.items()}})

            @dbus.service.method("org.example.PhoneStandIn", in_signature="", out_signature="s")
            def Asked(self):
                return json.dumps(asked)

        name = dbus.service.BusName("org.monkeycall.Phone", bus)
        Phone(bus, "/org/monkeycall/Phone")
        GLib.MainLoop().run()
        """

    struct Asked: Sendable, Equatable {
        let action: String
        let parameter: [String]
        let platform: [String: String]
    }

    private let probe: Connection
    private var seen = 0

    /// Installs it for activation on `bus` (its service file in the bus's services folder).
    init(bus: PrivateBus) throws {
        let script = bus.directory.appendingPathComponent("phone-stand-in.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        try "[D-BUS Service]\nName=\(PhoneApp.appID)\nExec=/usr/bin/python3 \(script.path)\n"
            .write(to: bus.servicesDirectory.appendingPathComponent("\(PhoneApp.appID).service"), atomically: true, encoding: .utf8)
        probe = try Connection(address: bus.address)
    }

    deinit { probe.close() }

    /// Whether the app was started (it owns its name).
    func isRunning() async throws -> Bool { try await probe.nameOwner(PhoneApp.appID) != nil }

    /// Everything it was asked so far (nothing, when it never started).
    func asked() async throws -> [Asked] {
        guard try await isRunning() else { return [] }
        let reply = try await probe.call(destination: PhoneApp.appID, path: PhoneApp.objectPath, interface: "org.example.PhoneStandIn", member: "Asked")
        guard case .string(let json)? = reply.first, let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            throw TestSupportError("the Phone stand-in answered \(reply)")
        }
        return list.map { Asked(action: $0["action"] as? String ?? "", parameter: $0["parameter"] as? [String] ?? [],
                                platform: $0["platform"] as? [String: String] ?? [:]) }
    }

    /// The next action it is asked for, or nil at the deadline (the app may have to start first).
    func next(timeout: Duration = .seconds(20)) async throws -> Asked? {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        repeat {
            let all = try await asked()
            if all.count > seen {
                seen += 1
                return all[seen - 1]
            }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        return nil
    }
}

/// A daemon with a vCard folder of contacts (numbers read in GB), the user's connection, and the
/// Phone app ready to be activated.
final class SearchRig: @unchecked Sendable {
    let folder: ContactFolder
    let daemon: RunningDaemon
    let user: Connection
    let phone: PhoneStandIn
    typealias Book = Telephony1.AddressBook
    typealias GNOME = Desktop.SearchProvider2
    typealias KRunner = Desktop.KRunner1

    init(contacts: [(file: String, name: String, numbers: [String])] = SearchRig.people, _ extra: [String] = []) async throws {
        folder = try ContactFolder()
        for contact in contacts { try folder.add(contact.file, name: contact.name, numbers: contact.numbers) }
        let bus = try await PrivateBus.start()
        phone = try PhoneStandIn(bus: bus)
        daemon = try await RunningDaemon(bus: bus, ["--contacts", folder.path] + extra, environment: ContactTests.environment, owningBus: true)
        user = try Connection(address: bus.address)
        try await waitForCount(contacts.count)
    }

    deinit { user.close() }

    static let people: [(file: String, name: String, numbers: [String])] = [
        ("ada.vcf", "Ada Lovelace", ["+44 20 7946 0001"]),
        ("zoe.vcf", "Zoë Ångström", ["+1 408 555 0199"]),
        ("adam.vcf", "Adam Smith", ["0161 496 0000"]),
        ("grace.vcf", "Grace Hopper", ["+1 212 555 0100", "020 7946 0100"]),
    ]

    var bus: PrivateBus { daemon.bus }

    /// Waits until the index holds `count` contacts (it is read in the background).
    func waitForCount(_ count: Int, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        while try await self.count() != count {
            guard ContinuousClock.now < deadline else { throw TestSupportError("the address book holds \(try await self.count()) contacts, not \(count)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func count() async throws -> UInt32 {
        try await user.get(Book.count, destination: Telephony1.busName, path: Telephony1.rootPath)
    }

    func search(_ query: String, _ limit: UInt32 = 0) async throws -> [Telephony1.Contact] {
        try await user.call(Book.search, destination: Telephony1.busName, path: Telephony1.rootPath, query, limit).map { try Telephony1.Contact(entries: $0) }
    }

    func names(_ query: String, _ limit: UInt32 = 0) async throws -> [String] { try await search(query, limit).map(\.name) }

    func initial(_ terms: [String]) async throws -> [String] {
        try await user.call(GNOME.getInitialResultSet, destination: Telephony1.busName, path: Telephony1.searchPath, terms)
    }

    func metas(_ ids: [String]) async throws -> [[String: DBusValue]] {
        try await user.call(GNOME.getResultMetas, destination: Telephony1.busName, path: Telephony1.searchPath, ids)
    }

    func activate(_ id: String, _ terms: [String] = []) async throws {
        try await user.call(GNOME.activateResult, destination: Telephony1.busName, path: Telephony1.searchPath, id, terms, 0)
    }

    func match(_ query: String) async throws -> [KRunner.RemoteMatch] {
        try await user.call(KRunner.match, destination: Telephony1.busName, path: Telephony1.runnerPath, query)
    }

    func run(_ id: String, _ action: String = "") async throws {
        try await user.call(KRunner.run, destination: Telephony1.busName, path: Telephony1.runnerPath, id, action)
    }

    /// A host app that calls phone numbers.
    func provider(_ name: String, _ configuration: [String: DBusValue] = [:]) async throws -> TestProvider {
        var config = configuration
        config["SupportedHandleTypes"] = config["SupportedHandleTypes"] ?? ["phone-number"].dbusValue
        return try await TestProvider(bus: bus, name: name, configuration: config)
    }

    /// Runs a command a user would, on this bus.
    func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await daemon.run(executable, arguments)
    }

    func gdbus(_ path: ObjectPath, _ method: String, _ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", Telephony1.busName, "--object-path", path.rawValue,
                                         "--method", method] + arguments)
    }

    /// The error a call answered, by name ("" when it succeeded).
    func error(_ work: () async throws -> Void) async -> (name: String, message: String) {
        do {
            try await work()
            return ("", "")
        } catch let error as DBusError {
            return (error.name, error.message)
        } catch {
            return ("\(error)", "")
        }
    }
}

extension ContactFolder {
    func add(_ file: String, name: String, numbers: [String]) throws {
        let tels = numbers.map { "TEL;TYPE=CELL:\($0)\r\n" }.joined()
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(file)\r\nFN:\(name)\r\n\(tels)END:VCARD\r\n"
        try Data(card.utf8).write(to: URL(fileURLWithPath: path + "/" + file), options: .atomic)
    }
}

@Suite("The user's people from the desktop: AddressBook.Search, GNOME Shell's search, KRunner")
struct SystemSearchTests {
    typealias Book = Telephony1.AddressBook
    typealias GNOME = Desktop.SearchProvider2
    typealias KRunner = Desktop.KRunner1
    static let invalidArgs = DBusError.Name.invalidArgs

    @Test("AddressBook.Search, as busctl calls it: any word's start without accents, numbers in any format, every contact by name, Count; IsFavorite; Changed to a host subscriber when a card is added")
    func addressBookSearch() async throws {
        let rig = try await SearchRig()
        // busctl, as a user would.
        let busctl = try await rig.run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                           Book.interface, "Search", "su", "zoe", "0"])
        #expect(busctl.status == 0 && busctl.stdout.hasPrefix("aa{sv} 1 4 "), "\(busctl.stdout)\(busctl.stderr)")
        #expect(busctl.stdout.contains("\"Name\" s \"Zo\\303\\253 \\303\\205ngstr\\303\\266m\""), "\(busctl.stdout)")
        #expect(busctl.stdout.contains("\"Numbers\" a(ss) 1 \"mobile\" \"+1 408 555 0199\""), "\(busctl.stdout)")

        #expect(try await rig.names("ADA") == ["Ada Lovelace", "Adam Smith"])
        #expect(try await rig.names("love ada") == ["Ada Lovelace"])
        #expect(try await rig.names("ångs") == ["Zoë Ångström"])
        #expect(try await rig.names("ove").isEmpty)
        for query in ["+44 20 7946 0001", "020 7946 0001", "(020) 7946-0001", "0044 20 7946 0001", "7946 0001"] {
            #expect(try await rig.names(query) == ["Ada Lovelace"], "\(query)")
        }
        #expect(try await rig.names("+44 161") == ["Adam Smith"], "a national number in the card, found from its E.164 start")
        #expect(try await rig.names("") == ["Ada Lovelace", "Adam Smith", "Grace Hopper", "Zoë Ångström"])
        #expect(try await rig.names("", 2) == ["Ada Lovelace", "Adam Smith"])
        let grace = try #require(try await rig.search("grace").first)
        #expect(grace.numbers == [LabeledNumber(label: "mobile", number: "+1 212 555 0100"), LabeledNumber(label: "mobile", number: "020 7946 0100")])
        let again = try await rig.search("hopper").first?.id
        #expect(grace.id.count == 16 && grace.id == again, "the same id from any search")
        #expect(!grace.isFavorite)
        #expect(try await rig.count() == 4)

        // A favorite of one of her numbers, in another format: she is a favorite.
        try await rig.user.subscribeToTelephony()
        let changed = try await SignalRecorder(rig.user, Book.changed.matchRule)
        _ = try await rig.user.call(Telephony1.Favorites.add, destination: Telephony1.busName, path: Telephony1.rootPath,
                                    "+442079460100", "phone-number", "Grace", "")
        #expect(await changed.next(timeout: .seconds(10)) != nil, "no Changed after the favorites changed")
        #expect(try await rig.search("grace").first?.isFavorite == true)

        // A card added while it runs: Changed, then Count and Search have it.
        try rig.folder.add("alan.vcf", name: "Alan Turing", numbers: ["+44 20 7946 0042"])
        #expect(await changed.next(timeout: .seconds(20)) != nil, "no Changed after a contact was added")
        #expect(try await rig.count() == 5)
        #expect(try await rig.names("tur") == ["Alan Turing"])
    }

    @Test("AddressBook.Search refuses what is out of bounds, naming the bound: a query over 1,024 bytes, a limit over 1,000, the wrong types; limit 0 is 50")
    func addressBookBounds() async throws {
        let many = (0..<60).map { (file: "p\($0).vcf", name: "Person \($0)", numbers: ["+44 20 7946 \(String(format: "%04d", 1000 + $0))"]) }
        let rig = try await SearchRig(contacts: many)
        #expect(try await rig.search("").count == 50)
        #expect(try await rig.search("", 1000).count == 60)
        #expect(try await rig.search("person", 7).count == 7)
        let longQuery = await rig.error { _ = try await rig.search(String(repeating: "a", count: 1025)) }
        #expect(longQuery.name == Self.invalidArgs && longQuery.message.contains("1024 bytes"), "\(longQuery)")
        #expect(try await rig.search(String(repeating: "é", count: 512)).isEmpty, "1,024 bytes is within")
        let overLimit = await rig.error { _ = try await rig.search("", 1001) }
        #expect(overLimit.name == Self.invalidArgs && overLimit.message.contains("at most 1000"), "\(overLimit)")
        let maxLimit = await rig.error { _ = try await rig.search("", .max) }
        #expect(maxLimit.name == Self.invalidArgs)
        // The wrong types, as busctl sends them.
        for (signature, arguments) in [("ss", ["a", "b"]), ("s", ["a"]), ("us", ["1", "a"]), ("suu", ["a", "1", "2"])] {
            let wrong = try await rig.run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                              Book.interface, "Search", signature] + arguments)
            #expect(wrong.status != 0 && wrong.stderr.contains("Search expects (s query, u limit)"), "\(signature): \(wrong.stderr)")
        }
        let setCount = await rig.error { try await rig.user.set(Book.count, destination: Telephony1.busName, path: Telephony1.rootPath, 3) }
        #expect(!setCount.name.isEmpty, "Count is read-only")
        try await rig.daemon.daemon.expectRunning()
    }

    @Test("GNOME Shell, as gdbus calls it: results best first, a meta each with name, description (number and app) and icon; ActivateResult starts the call in the provider for her number; a typed number is a result; LaunchSearch opens the Phone app on the search")
    func gnomeShell() async throws {
        let rig = try await SearchRig()
        let app = try await rig.provider("PyPhone")
        let initial = try await rig.gdbus(Telephony1.searchPath, "\(GNOME.interface).GetInitialResultSet", "['ada']")
        #expect(initial.status == 0, "\(initial.stderr)")
        let ids = try await rig.initial(["ada"])
        #expect(ids.count == 2 && initial.stdout.contains(ids[0]), "\(ids) \(initial.stdout)")
        let metas = try await rig.metas(ids)
        #expect(metas.map { $0["name"] } == [.string("Ada Lovelace"), .string("Adam Smith")])
        #expect(metas.map { $0["id"] } == ids.map { .string($0) }, "one meta per id, in order")
        #expect(metas[0]["description"] == .string("mobile +44 20 7946 0001 · with PyPhone"), "\(metas[0])")
        #expect(metas[0]["icon"] == .structure([.string("themed"), .variant(["avatar-default-symbolic", "avatar-default"].dbusValue)]))
        #expect(metas[0]["clipboardText"] == .string("+44 20 7946 0001"))
        // gdbus reads the icon as a serialized GIcon.
        let gdbusMetas = try await rig.gdbus(Telephony1.searchPath, "\(GNOME.interface).GetResultMetas", "['\(ids[0])']")
        #expect(gdbusMetas.stdout.contains("'icon': <('themed', <['avatar-default-symbolic', 'avatar-default']>)>"), "\(gdbusMetas.stdout)")

        // The user clicks Ada: PyPhone is asked to start the call, to her number in E.164.
        try await rig.activate(ids[0], ["ada"])
        let start = try #require(await app.nextAction("start"))
        #expect(start.args["Handle"] == .string("+442079460001") && start.args["HandleType"] == .string("phone-number"), "\(start.args)")
        try await app.fulfill(start)

        // A typed number, as the shell hands it over: three terms.
        let typed = try await rig.initial(["+1", "408", "555", "0142"])
        #expect(typed.count == 1)
        let typedMeta = try #require(try await rig.metas(typed).first)
        #expect(typedMeta["name"] == .string("Call +1 408 555 0142") && typedMeta["description"] == .string("with PyPhone"), "\(typedMeta)")
        try await rig.activate(typed[0])
        let dialled = try #require(await app.nextAction("start"))
        #expect(dialled.args["Handle"] == .string("+14085550142"), "\(dialled.args)")
        // Refined as the user types on.
        let refined = try await rig.user.call(GNOME.getSubsearchResultSet, destination: Telephony1.busName, path: Telephony1.searchPath, ids, ["ada", "lo"])
        #expect(try await rig.metas(refined).map { $0["name"] } == [.string("Ada Lovelace")])

        // LaunchSearch: the Phone app opens on the search (started by D-Bus activation).
        #expect(try await rig.phone.isRunning() == false)
        try await rig.user.call(GNOME.launchSearch, destination: Telephony1.busName, path: Telephony1.searchPath, ["ada", "lo"], 1234)
        let asked = try #require(try await rig.phone.next())
        #expect(asked == PhoneStandIn.Asked(action: "search", parameter: ["ada lo"], platform: ["desktop-startup-id": "_TIME1234"]))
    }

    @Test("which app calls: the favorite's, the Recents entry's, the user's tel choice, the one that can; when none is clear the Phone app asks, with the number")
    func routing() async throws {
        let rig = try await SearchRig()
        let sip = try await rig.provider("SIP")
        let py = try await rig.provider("PyPhone")
        // Two apps can: Ada's row says the user chooses, and a click asks the Phone app.
        let ada = try #require(try await rig.initial(["ada", "love"]).first)
        #expect(try await rig.metas([ada]).first?["description"] == .string("mobile +44 20 7946 0001 · choose the app"))
        try await rig.activate(ada)
        #expect(try await rig.phone.next() == PhoneStandIn.Asked(action: "call", parameter: ["+442079460001"], platform: [:]))

        // A favorite saved with PyPhone goes through PyPhone.
        _ = try await rig.user.call(Telephony1.Favorites.add, destination: Telephony1.busName, path: Telephony1.rootPath,
                                    "+12125550100", "phone-number", "Grace (favorite)", "PyPhone")
        let favorite = try #require(try await rig.initial(["grace"]).first)
        #expect(try await rig.metas([favorite]).first?["name"] == .string("Grace (favorite)"))
        #expect(try await rig.metas([favorite]).first?["icon"] == .structure([.string("themed"), .variant(["starred-symbolic", "starred"].dbusValue)]))
        try await rig.activate(favorite)
        #expect(try #require(await py.nextAction("start")).args["Handle"] == .string("+12125550100"))

        // A caller in Recents, who called through SIP: found by number, called back through SIP.
        try await rig.user.subscribeToTelephony()
        let recorded = try await SignalRecorder(rig.user, Telephony1.Recents.entryAdded.matchRule)
        let uuid = try await sip.reportIncoming("+441134960777", update: ["HandleType": .string("phone-number"), "LocalizedCallerName": .string("Mystery Caller")])
        try await sip.call("ReportCallEnded", [.string(uuid), .string("unanswered"), .uint64(0)])
        #expect(await recorded.next(timeout: .seconds(20)) != nil)
        let recent = try #require(try await rig.initial(["mystery"]).first)
        #expect(try await rig.metas([recent]).first?["description"] == .string("+441134960777 · with SIP"))
        try await rig.activate(recent)
        #expect(try #require(await sip.nextAction("start")).args["Handle"] == .string("+441134960777"))

        // The user's tel choice decides for a contact.
        try await rig.user.call(Telephony1.Manager.setLinkHandler, destination: Telephony1.busName, path: Telephony1.rootPath, "tel", "SIP")
        try await rig.activate(ada)
        #expect(try #require(await sip.nextAction("start")).args["Handle"] == .string("+442079460001"))

        // No app at all that can call: the row says so, and the Phone app asks (and explains).
        try await sip.call("Invalidate")
        try await py.call("Invalidate")
        let zoe = try #require(try await rig.initial(["zoe"]).first)
        #expect(try await rig.metas([zoe]).first?["description"] == .string("mobile +1 408 555 0199 · no app can call it now"))
        try await rig.activate(zoe)
        #expect(try await rig.phone.next() == PhoneStandIn.Asked(action: "call", parameter: ["+14085550199"], platform: [:]))
    }

    @Test("bad terms and ids: none, empty, control characters answer; 10 KiB or 1,000 terms, an id the provider never gave and the wrong types are InvalidArgs; the daemon carries on")
    func badTerms() async throws {
        let rig = try await SearchRig()
        #expect(try await rig.initial([]).isEmpty)
        #expect(try await rig.initial([""]).isEmpty)
        #expect(try await rig.initial(["", " ", "\t"]).isEmpty)
        #expect(try await rig.initial(["\u{1}a\u{7}da\u{1B}[31m"]).isEmpty, "controls split words: nothing is called 'a' 'da'")
        let controlled = try await rig.initial(["ada\u{202E}", "love\n"])
        #expect(try await rig.metas(controlled).map { $0["name"] } == [.string("Ada Lovelace")])
        let tenKiB = await rig.error { _ = try await rig.initial([String(repeating: "a", count: 10 * 1024)]) }
        #expect(tenKiB.name == Self.invalidArgs && tenKiB.message.contains("1024 bytes"), "\(tenKiB)")
        let thousand = await rig.error { _ = try await rig.initial(Array(repeating: "a", count: 1000)) }
        #expect(thousand.name == Self.invalidArgs && thousand.message.contains("at most 64"), "\(thousand)")
        let subsearch = await rig.error {
            _ = try await rig.user.call(GNOME.getSubsearchResultSet, destination: Telephony1.busName, path: Telephony1.searchPath,
                                        Array(repeating: "x", count: 10_000), ["ada"])
        }
        #expect(subsearch.name == Self.invalidArgs, "\(subsearch)")
        for bad in ["", "nonsense", "contact:phone-number::+44:%ZZ:a:b", String(repeating: "z", count: 9000)] {
            let meta = await rig.error { _ = try await rig.metas(["number:phone-number::+1::+1:", bad]) }
            #expect(meta.name == Self.invalidArgs, "\(bad.prefix(20)): \(meta)")
            let activate = await rig.error { try await rig.activate(bad) }
            #expect(activate.name == Self.invalidArgs, "\(bad.prefix(20)): \(activate)")
        }
        let wrong = try await rig.run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "call", Telephony1.busName, Telephony1.searchPath.rawValue,
                                                          GNOME.interface, "GetInitialResultSet", "s", "ada"])
        #expect(wrong.status != 0 && wrong.stderr.contains("expects (as terms)"), "\(wrong.stderr)")
        let wrongActivate = try await rig.run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "call", Telephony1.busName, Telephony1.searchPath.rawValue,
                                                                   GNOME.interface, "ActivateResult", "sas", "x", "0"])
        #expect(wrongActivate.status != 0, "\(wrongActivate.stdout)")
        let longMatch = await rig.error { _ = try await rig.match(String(repeating: "a", count: 10 * 1024)) }
        #expect(longMatch.name == Self.invalidArgs)
        #expect(try await rig.match("\u{1}\u{2}").isEmpty)
        #expect(try await rig.initial(["ada"]).count == 2, "still answering")
        try await rig.daemon.daemon.expectRunning()
    }

    @Test("a result id whose handle holds control or bidi characters is InvalidArgs naming the character, from ActivateResult and Run: no app dials it and the Phone app is not asked to (issue 53: the service dialled it)")
    func dressedResultIDs() async throws {
        let rig = try await SearchRig()
        let app = try await rig.provider("PyPhone")
        // Fields: source, handle type, app, handle, name, shown, label; controls percent-encoded as ids carry them.
        for handle in ["%1B[31m+1900555%090100\u{202E}", "+1900555\u{200E}0100", "+1900555\u{2066}0100", "+1900555%7F0100"] {
            let id = "number:phone-number::\(handle)::\(handle):"
            let activated = await rig.error { try await rig.activate(id) }
            #expect(activated.name == Self.invalidArgs && activated.message.contains("U+"), "ActivateResult \(handle.debugDescription): \(activated)")
            let ran = await rig.error { try await rig.run(id) }
            #expect(ran.name == Self.invalidArgs && ran.message.contains("U+"), "Run \(handle.debugDescription): \(ran)")
        }
        #expect(await app.nextAction("start", timeout: .seconds(1)) == nil, "an app was asked to dial a dressed handle")
        let asked = try await rig.phone.asked()
        #expect(asked.isEmpty, "the Phone app was asked: \(asked)")
        // The same result, clean, calls.
        try await rig.activate("number:phone-number::+19005550100::+1 900 555 0100:")
        let start = try #require(await app.nextAction("start"))
        #expect(start.args["Handle"] == .string("+19005550100"), "\(start.args)")
    }

    @Test("KRunner, its methods as KRunner 5.103's XML declares them: Config's minimum of 2 letters, an action per app, Match with subtext and the actions that apply, Run's default and chosen app, Teardown, Plasma 6's activation token to the Phone app")
    func kRunner() async throws {
        let rig = try await SearchRig()
        let config = try await rig.gdbus(Telephony1.runnerPath, "\(KRunner.interface).Config")
        #expect(config.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "({'MinLetterCount': <2>},)", "\(config.stdout)\(config.stderr)")
        #expect(try await rig.user.call(KRunner.actions, destination: Telephony1.busName, path: Telephony1.runnerPath).isEmpty)
        let py = try await rig.provider("PyPhone")

        // One app: no actions on a match; Run calls through it.
        let one = try await rig.match("ada lovelace")
        #expect(one.count == 1)
        #expect(one.first?.text == "Ada Lovelace" && one.first?.iconName == "avatar-default-symbolic" && one.first?.type == 100, "\(one)")
        #expect(one.first?.properties["subtext"] == .string("mobile +44 20 7946 0001 · with PyPhone"))
        #expect(one.first?.properties["actions"] == [String]().dbusValue)
        let gdbusMatch = try await rig.gdbus(Telephony1.runnerPath, "\(KRunner.interface).Match", "'ada lovelace'")
        #expect(gdbusMatch.stdout.contains("'Ada Lovelace', 'avatar-default-symbolic', 100, 1.0, {"), "\(gdbusMatch.stdout)")
        try await rig.run(one[0].id)
        #expect(try #require(await py.nextAction("start")).args["Handle"] == .string("+442079460001"))

        // Two apps: an action each, on every match; Run with one calls through that app.
        let sip = try await rig.provider("SIP")
        let actions = try await rig.user.call(KRunner.actions, destination: Telephony1.busName, path: Telephony1.runnerPath)
        #expect(Set(actions.map(\.id)) == ["app:SIP", "app:PyPhone"] && actions.contains { $0.text == "Call with SIP" }, "\(actions)")
        let two = try await rig.match("ada")
        #expect(two.map(\.text) == ["Ada Lovelace", "Adam Smith"] && two.map(\.type) == [30, 30])
        #expect(two[0].relevance > two[1].relevance)
        #expect(two[0].properties["actions"] == ["app:SIP", "app:PyPhone"].dbusValue, "\(two[0].properties)")
        try await rig.run(two[1].id, "app:SIP")
        #expect(try #require(await sip.nextAction("start")).args["Handle"] == .string("+441614960000"))
        let unknownAction = await rig.error { try await rig.run(two[1].id, "app:Gone") }
        #expect(unknownAction.name == Self.invalidArgs)
        let badAction = await rig.error { try await rig.run(two[1].id, "delete-everything") }
        #expect(badAction.name == Self.invalidArgs)
        let badMatch = await rig.error { try await rig.run("not a match", "") }
        #expect(badMatch.name == Self.invalidArgs)

        // A typed number; Plasma 6 gives a token first, which the Phone app gets with the number (two apps: it asks).
        let typed = try await rig.match("+1 408 555 0142")
        #expect(typed.first?.text == "Call +1 408 555 0142" && typed.first?.properties["subtext"] == .string("choose the app"))
        try await rig.user.call(KRunner.setActivationToken, destination: Telephony1.busName, path: Telephony1.runnerPath, "token-123")
        try await rig.run(typed[0].id)
        #expect(try await rig.phone.next() == PhoneStandIn.Asked(action: "call", parameter: ["+14085550142"], platform: ["activation-token": "token-123"]))
        try await rig.user.call(KRunner.teardown, destination: Telephony1.busName, path: Telephony1.runnerPath)
        #expect(try await rig.match("a").map(\.text) == ["Ada Lovelace", "Adam Smith", "Zoë Ångström"], "KRunner asks from 2 letters; one still answers")
    }

    @Test("the interfaces are the desktops' own: GNOME Shell's XML (when installed) and KRunner 5.103's signatures; neither object is in GetManagedObjects; --no-search-provider serves neither")
    func desktopInterfaces() async throws {
        let rig = try await SearchRig()
        func served(_ path: ObjectPath, _ interface: String) async throws -> Set<String> {
            let reply = try await rig.user.call(destination: Telephony1.busName, path: path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            guard case .string(let xml)? = reply.first, let shape = try IntrospectionDocument(xml: xml).interfaces[interface] else { return [] }
            return Set(shape.members.map(\.description))
        }
        let gnomeXML = "/usr/share/dbus-1/interfaces/org.gnome.ShellSearchProvider2.xml"
        if let xml = try? String(contentsOfFile: gnomeXML, encoding: .utf8) {
            let theirs = try #require(try IntrospectionDocument(xml: xml).interfaces[GNOME.interface])
            #expect(try await served(Telephony1.searchPath, GNOME.interface) == Set(theirs.members.map(\.description)))
        }
        let runner = try await rig.run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "introspect", Telephony1.busName, Telephony1.runnerPath.rawValue, KRunner.interface])
        for line in [".Actions  method - a(sss)", ".Config  method - a{sv}", ".Match  method s a(sssida{sv})", ".Run  method ss -", ".Teardown  method - -"] {
            let words = line.split(separator: " ")
            #expect(runner.stdout.split(separator: "\n").contains { $0.split(separator: " ").prefix(words.count).elementsEqual(words) }, "\(line): \(runner.stdout)")
        }
        let managed = try await rig.user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        #expect(managed == [.dictionary(key: "o", value: "a{sa{sv}}", [])], "\(managed)")

        let off = try await SearchRig(["--no-search-provider"])
        let gone = await off.error { _ = try await off.initial(["ada"]) }
        #expect(gone.name.hasPrefix("org.freedesktop.DBus.Error.Unknown"), "\(gone)")
        let goneRunner = await off.error { _ = try await off.match("ada") }
        #expect(goneRunner.name.hasPrefix("org.freedesktop.DBus.Error.Unknown"), "\(goneRunner)")
        #expect(try await off.names("ada").count == 2, "the address book still answers")
    }

    @Test("a sandboxed app gets AccessDenied naming it, and learns nothing: AddressBook.Search and Count, GNOME's and KRunner's methods; it never hears Changed",
          .enabled(if: Sandbox.isAvailable, "bubblewrap is not installed"))
    func sandboxedRefused() async throws {
        let rig = try await SearchRig()
        let spy = try await SandboxedApp(appID: "org.example.Spy", bus: rig.bus)
        #expect(try await spy.root(Telephony1.Manager.interface, "Subscribe").error == nil)
        var outcomes: [(String, SandboxedApp.Outcome)] = [
            ("Search", try await spy.root(Book.interface, "Search", signature: "su", ["ada", 0])),
            ("Count", try await spy.get(Telephony1.rootPath, Book.interface, "Count")),
            ("GetAll", try await spy.call(Telephony1.rootPath, "org.freedesktop.DBus.Properties", "GetAll", signature: "s", [Book.interface])),
            ("GetInitialResultSet", try await spy.call(Telephony1.searchPath, GNOME.interface, "GetInitialResultSet", signature: "as", [["ada"]])),
            ("GetResultMetas", try await spy.call(Telephony1.searchPath, GNOME.interface, "GetResultMetas", signature: "as", [["number:phone-number::+1::+1:"]])),
            ("ActivateResult", try await spy.call(Telephony1.searchPath, GNOME.interface, "ActivateResult", signature: "sasu", ["number:phone-number::+1::+1:", [String](), 0])),
            ("LaunchSearch", try await spy.call(Telephony1.searchPath, GNOME.interface, "LaunchSearch", signature: "asu", [["ada"], 0])),
            ("Match", try await spy.call(Telephony1.runnerPath, KRunner.interface, "Match", signature: "s", ["ada"])),
            ("Run", try await spy.call(Telephony1.runnerPath, KRunner.interface, "Run", signature: "ss", ["number:phone-number::+1::+1:", ""])),
            ("Actions", try await spy.call(Telephony1.runnerPath, KRunner.interface, "Actions")),
            ("Config", try await spy.call(Telephony1.runnerPath, KRunner.interface, "Config")),
        ]
        outcomes.append(("Introspect /Search", try await spy.call(Telephony1.searchPath, "org.freedesktop.DBus.Introspectable", "Introspect")))
        for (what, outcome) in outcomes.dropLast() {
            #expect(outcome.isAccessDenied && outcome.message.contains("org.example.Spy"), "\(what): \(outcome)")
            #expect(!outcome.description.contains("Lovelace"), "\(what) told a contact's name")
        }
        #expect(try await rig.phone.isRunning() == false, "the sandboxed app started nothing")
        // The user's own host tool adds a contact: only host subscribers hear of it.
        try await rig.user.subscribeToTelephony()
        let changed = try await SignalRecorder(rig.user, Book.changed.matchRule)
        try rig.folder.add("alan.vcf", name: "Alan Turing", numbers: ["+44 20 7946 0042"])
        #expect(await changed.next(timeout: .seconds(20)) != nil)
        let heard = try await spy.heard()
        #expect(!heard.contains { $0.interface == Book.interface || $0.text.contains(Book.interface) }, "\(heard)")
    }
}

extension ChildProcess {
    /// The daemon is still up.
    func expectRunning(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(isRunning, "monkeycalld died: \(output.suffix(2000))", sourceLocation: sourceLocation)
    }
}
