import AddressBook
import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A folder of vCard files for a daemon's `--contacts`, removed at deinit.
final class ContactFolder: @unchecked Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-contacts-\(UUID().uuidString.prefix(8))").path

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// One card in its own file, renamed into place as vdirsyncer writes it.
    func add(_ file: String, name: String, _ numbers: String...) throws {
        let tels = numbers.map { "TEL;TYPE=CELL:\($0)\r\n" }.joined()
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(file)\r\nFN:\(name)\r\n\(tels)END:VCARD\r\n"
        try Data(card.utf8).write(to: URL(fileURLWithPath: path + "/" + file), options: .atomic)
    }
}

/// The user's address book through the service: names, screening, the Do Not Disturb exception.
@Suite("Callers named from the address book")
struct ContactTests {
    static let manager = Telephony1.Manager.interface
    static let directory = Telephony1.CallDirectory.interface
    /// GB numbers: a national `020 …` in a card is read in the locale's country.
    static let environment = ["LANG": "en_GB.UTF-8", "LC_ALL": "", "LC_ADDRESS": ""]

    /// Waits until the service names `handle` `name` (the index is built in the background).
    static func waitUntilNamed(_ handle: String, _ name: String, timeout: Duration = .seconds(20),
                               identify: (String) async throws -> [DBusValue]) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if try await identify(handle).first == .string(name) { return true }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        return false
    }

    static func identify(_ user: Connection) -> (String) async throws -> [DBusValue] {
        { handle in
            try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: directory, member: "Identify", [.string(handle)])
        }
    }

    @Test("a vCard folder given by --contacts names a ringing caller over the app's name: the notification, the call object a host subscriber reads, identify, Recents and monkeycall recents; national numbers in the locale's country")
    func contactNamesTheCaller() async throws {
        let folder = try ContactFolder()
        try folder.add("alice.vcf", name: "Alice Contact", "+44 20 7946 0001")
        try folder.add("bob.vcf", name: "Bob National", "020 7946 0002")
        let daemon = try await RunningDaemon(["--contacts", folder.path], environment: Self.environment)
        let server = try await NotificationServer(address: daemon.bus.address)
        let user = try Connection(address: daemon.bus.address)
        defer { user.close() }
        try await user.subscribeToTelephony()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        #expect(try await Self.waitUntilNamed("+442079460001", "Alice Contact", identify: Self.identify(user)))

        let uuid = try await app.reportIncoming("+442079460001", update: ["HandleType": .string("phone-number"), "LocalizedCallerName": .string("A. from the app")])
        let ring = await server.notified.next(timeout: .seconds(10)) { $0.hints["category"] == .string("call.incoming") }
        #expect(ring?.body.contains("Alice Contact") == true && ring?.body.contains("A. from the app") == false, "\(String(describing: ring))")
        let name = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(uuid), interface: "org.freedesktop.DBus.Properties",
                                       member: "Get", [.string(Telephony1.Call.interface), .string("CallerName")])
        #expect(name == [.variant(.string("Alice Contact"))])
        let listed = try await daemon.cli("calls")
        #expect(listed.stdout.contains("Alice Contact"), "\(listed.stdout)\(listed.stderr)")
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])

        // Recorded with the contact's name.
        let deadline = ContinuousClock.now + .seconds(10)
        var recents = try await daemon.cli("recents")
        while !recents.stdout.contains("Alice Contact"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            recents = try await daemon.cli("recents")
        }
        #expect(recents.stdout.contains("Alice Contact"), "\(recents.stdout)\(recents.stderr)")

        let bob = try await daemon.cli("identify", "+44 20 7946 0002")
        #expect(bob.stdout == "Bob National\n", "\(bob.stdout)\(bob.stderr)")
        #expect(try await daemon.cli("identify", "+44 20 7946 0003").stdout == "unknown caller\n")
        // A favorite's name is the user's first choice.
        _ = try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Favorites.interface, member: "Add",
                                [.string("+442079460001"), .string("phone-number"), .string("Alice (favorite)"), .string("Monkey")])
        #expect(try await daemon.cli("identify", "+442079460001").stdout == "Alice (favorite)\n")
        #expect(daemon.daemon.output.contains("contacts: vcf:\(URL(fileURLWithPath: folder.path).standardizedFileURL.path) read"), "\(daemon.daemon.output)")
    }

    @Test("a sandboxed app that owns a call from a contact reads back only what it supplied (\"\" or its own name), by Get, GetAll, GetManagedObjects and signals; the user reads the contact's name",
          .enabled(if: Sandbox.isAvailable, "bubblewrap is not installed"))
    func sandboxedOwnerNeverReadsTheContact() async throws {
        let folder = try ContactFolder()
        try folder.add("alice.vcf", name: "Alice Contact", "+44 20 7946 0001")
        let daemon = try await RunningDaemon(["--contacts", folder.path], environment: Self.environment)
        let user = try Connection(address: daemon.bus.address)
        defer { user.close() }
        #expect(try await Self.waitUntilNamed("+442079460001", "Alice Contact", identify: Self.identify(user)))
        let spy = try await SandboxedApp(appID: "org.example.Spy", bus: daemon.bus)
        let own = try await spy.registerProvider(name: "Spy")
        let bare = try await spy.reportIncoming(own, "+442079460001")
        let supplied = try await spy.reportIncoming(own, "+44 20 7946 0001", update: ["LocalizedCallerName": "Own Name"])
        for (uuid, appReads) in [(bare, ""), (supplied, "Own Name")] {
            try await spy.expectCallerName(of: uuid, appReads: appReads, userReads: "Alice Contact", user: user)
        }
        let managed = try await spy.root("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        #expect(!"\(managed)".contains("Alice Contact"), "GetManagedObjects told the contact's name")
        let heard = try await spy.heard()
        #expect(!heard.contains { $0.text.contains("Alice Contact") }, "a signal told the contact's name: \(heard)")
    }

    @Test("contacts follow the folder while the daemon runs: a card added names the next call, a damaged card is logged with its file and skipped, a card deleted names no one; a folder made after the start is followed")
    func contactAddedWhileRunning() async throws {
        let parent = try ContactFolder()
        let folder = parent.path + "/later"
        let daemon = try await RunningDaemon(["--contacts", folder], environment: Self.environment)
        let server = try await NotificationServer(address: daemon.bus.address)
        let user = try Connection(address: daemon.bus.address)
        defer { user.close() }
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let first = try await app.reportIncoming("+442079460005")
        #expect(await server.notified.next(timeout: .seconds(10)) { $0.body.contains("+442079460005") } != nil)
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])

        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("BEGIN:VCARD\r\nFN:Broken\r\nTEL:+44 20 7946 0009\r\n".utf8).write(to: URL(fileURLWithPath: folder + "/broken.vcf"))
        try Data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Carol Later\r\nTEL:020 7946 0005\r\nEND:VCARD\r\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/carol.vcf"), options: .atomic)
        #expect(try await Self.waitUntilNamed("+442079460005", "Carol Later", identify: Self.identify(user)))
        let second = try await app.reportIncoming("+442079460005")
        #expect(await server.notified.next(timeout: .seconds(10)) { $0.body.contains("Carol Later") } != nil)
        try await app.call("ReportCallEnded", [.string(second), .string("remote-ended"), .uint64(0)])
        // The log line may still be in the pipe.
        #expect(await daemon.daemon.waitForOutput(containing: "broken.vcf"), "\(daemon.daemon.output)")

        try FileManager.default.removeItem(atPath: folder + "/carol.vcf")
        #expect(try await Self.waitUntilNamed("+442079460005", "", identify: Self.identify(user)))
    }

    @Test("a contact added while a call from its number rings names that call at once: the ringing notification in place, and the call object's CallerName")
    func ringingCallNamed() async throws {
        let folder = try ContactFolder()
        let daemon = try await RunningDaemon(["--contacts", folder.path], environment: Self.environment)
        let server = try await NotificationServer(address: daemon.bus.address)
        let user = try Connection(address: daemon.bus.address)
        defer { user.close() }
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("+442079460007")
        let ring = try #require(await server.notified.next(timeout: .seconds(10)) { $0.body.contains("+442079460007") })
        #expect(!ring.body.contains("Dana"))

        try folder.add("dana.vcf", name: "Dana Ringing", "+44 20 7946 0007")
        let named = try #require(await server.notified.next(timeout: .seconds(20)) { $0.body.contains("Dana Ringing") })
        #expect(named.id == ring.id && named.replacesID == ring.id && named.summary == ring.summary, "\(named)")
        let name = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(uuid), interface: "org.freedesktop.DBus.Properties",
                                       member: "Get", [.string(Telephony1.Call.interface), .string("CallerName")])
        #expect(name == [.variant(.string("Dana Ringing"))])
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
    }

    @Test("GNOME's address book through the daemon: a contact added with libebook while monkeycalld runs names the next ringing call, and is gone once removed (the shared evolution-data-server, read by the monkeycall-contacts helper beside monkeycalld)")
    func gnomeContactNamesTheCaller() async throws {
        let eds = try await SharedEDS.shared.value
        // Alone with EDS: the test that stops it must not see this one activate it.
        try await eds.exclusively {
            let daemon = try await RunningDaemon(bus: eds.bus, environment: eds.environment)
            let server = try await NotificationServer(address: eds.bus.address)
            defer { server.stop() }
            let user = try Connection(address: eds.bus.address)
            defer { user.close() }
            let app = try await TestProvider(bus: eds.bus, name: "Monkey", configuration: [:])
            defer { app.connection.close() }
            let uid = try await eds.contacts("add", "Grace GNOME", "CELL:020 7946 0150", "WORK,VOICE:+1 408 555 0150")
            #expect(try await Self.waitUntilNamed("+442079460150", "Grace GNOME", timeout: .seconds(60), identify: Self.identify(user)))
            // Found by the address book's search, each number as written, with the label its types give.
            let found = try await user.call(Telephony1.AddressBook.search, destination: Telephony1.busName, path: Telephony1.rootPath, "grace gno", 0)
            let contact = try Telephony1.Contact(entries: try #require(found.first))
            #expect(contact.name == "Grace GNOME" && contact.numbers == [LabeledNumber(label: "mobile", number: "020 7946 0150"),
                                                                         LabeledNumber(label: "work", number: "+1 408 555 0150")], "\(contact)")
            let uuid = try await app.reportIncoming("+44 20 7946 0150")
            #expect(await server.notified.next(timeout: .seconds(10)) { $0.body.hasPrefix("Grace GNOME\n") } != nil)
            try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
            try await eds.contacts("remove", uid)
            #expect(try await Self.waitUntilNamed("+442079460150", "", timeout: .seconds(60), identify: Self.identify(user)))
            daemon.daemon.terminate()
            #expect(await daemon.daemon.waitForExit() == 0)
        }
    }

    @Test("contacts are known callers: with SilenceUnknownCallers a contact rings and a stranger is silenced; with Do Not Disturb a contact rings only with DoNotDisturbAllowContacts")
    func contactsRingThroughScreening() async throws {
        let folder = try ContactFolder()
        try folder.add("dave.vcf", name: "Dave Contact", "+1 408 555 0101")
        let fixture = try await ServiceFixture { options in
            options.addressBook = AddressBook.Configuration(folders: [folder.path], edsHelper: nil, numbering: ContactNumbering(region: "US"))
        }
        let app = try await fixture.provider("Monkey")
        func set(_ name: String, _ value: Bool) async throws {
            try await fixture.root("org.freedesktop.DBus.Properties", "Set", [.string(Self.manager), .string(name), .variant(.bool(value))])
        }
        func ring(_ handle: String) async -> String? {
            let error = await dbusError {
                let uuid = try await app.reportIncoming(handle)
                try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
            }
            return error?.name
        }
        #expect(try await Self.waitUntilNamed("+14085550101", "Dave Contact") { try await fixture.root(Self.directory, "Identify", [.string($0)]) })
        let filtered = APIError.filteredByDoNotDisturb.rawValue

        try await set("SilenceUnknownCallers", true)
        #expect(await ring("+1 (408) 555-0101") == nil)
        #expect(await ring("+14085550199") == filtered)
        try await set("SilenceUnknownCallers", false)

        // Repeated calls would ring anyway: only the contacts' exception is tested.
        try await set("DoNotDisturbAllowRepeatedCalls", false)
        try await set("DoNotDisturb", true)
        #expect(await ring("+14085550101") == filtered)
        try await set("DoNotDisturbAllowContacts", true)
        #expect(await ring("+14085550101") == nil)
        #expect(await ring("+14085550198") == filtered)
        try await set("DoNotDisturbAllowContacts", false)
        #expect(await ring("+14085550101") == filtered)
    }

    @Test("DoNotDisturbAllowContacts: false by default, set with monkeycall dnd allow contacts, shown by dnd status, persisted across a restart; a wrong type is InvalidArgs; dnd allow without whom is refused")
    func allowContactsSetting() async throws {
        let bus = try await PrivateBus.start()
        let first = try await RunningDaemon(bus: bus)
        let address = "--address=\(bus.address)"
        let property = [address, Telephony1.busName, Telephony1.rootPath.rawValue, Self.manager, "DoNotDisturbAllowContacts"]
        func get(_ daemon: RunningDaemon) async throws -> String {
            try await daemon.run("/usr/bin/busctl", ["get-property"] + property).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await get(first) == "b false")
        #expect(try await first.cli("dnd").stdout.contains("contacts ring: off"))
        let allowed = try await first.cli("dnd", "allow", "contacts")
        #expect(allowed.status == 0 && allowed.stdout.contains("contacts ring: on"), "\(allowed.stdout)\(allowed.stderr)")
        #expect(try await first.cli("dnd", "disallow", "favorites").stdout.contains("favorites ring: off"))
        let user = try Connection(address: bus.address)
        defer { user.close() }
        let wrongType = await dbusError {
            _ = try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Properties", member: "Set",
                                    [.string(Self.manager), .string("DoNotDisturbAllowContacts"), .variant(.string("yes"))])
        }
        #expect(wrongType?.name == DBusError.Name.invalidArgs, "\(String(describing: wrongType))")
        let noWhom = try await first.cli("dnd", "allow")
        #expect(noWhom.status != 0 && noWhom.stderr.contains("contacts, favorites, repeated-calls"), "\(noWhom.stderr)")
        let misplaced = try await first.cli("dnd", "on", "contacts")
        #expect(misplaced.status != 0 && misplaced.stderr.contains("monkeycall dnd allow contacts"), "\(misplaced.stderr)")
        first.daemon.terminate()
        #expect(await first.daemon.waitForExit() == 0)

        let second = try await RunningDaemon(bus: bus, owningBus: true)
        #expect(try await get(second) == "b true")
        let status = try await second.cli("dnd", "status")
        #expect(status.stdout.contains("favorites ring: off, contacts ring: on, repeated calls ring: on"), "\(status.stdout)")
    }
}
