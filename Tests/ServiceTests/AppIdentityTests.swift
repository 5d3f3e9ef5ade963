import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing
import TelephonyCore

/// State that belongs to the app, not to the Name it chooses: sandboxed apps in real bubblewrap
/// sandboxes against host apps.
@Suite("App identity", .enabled(if: Sandbox.isAvailable, "bubblewrap is not installed"))
struct AppIdentityTests {
    static let directory = Telephony1.CallDirectory.interface
    static let update = Telephony1.CallDirectoryUpdate.interface
    typealias Manager = Telephony1.Manager

    /// Fills and completes a directory from inside the sandbox: `labels` by number.
    func completeDirectory(_ app: SandboxedApp, _ provider: ObjectPath, labels: [(Int64, String)]) async throws {
        let begun = try await app.call(provider, Telephony1.Provider.interface, "BeginCallDirectoryUpdate", signature: "b", [false])
        let path = try ObjectPath(try #require(begun.result as? String, "\(begun)"))
        let added = try await app.call(path, Self.update, "AddIdentificationEntries", signature: "axas", [labels.map(\.0), labels.map(\.1)])
        #expect(added.error == nil, "\(added)")
        let completed = try await app.call(path, Self.update, "Complete")
        #expect(completed.error == nil, "\(completed)")
    }

    /// A host app's directory: +1 408 555 0100 is "Real Bank".
    func completeRealBankDirectory(_ bank: TestProvider) async throws {
        guard case .objectPath(let path)? = try await bank.call("BeginCallDirectoryUpdate", [.bool(false)]).first else {
            throw TestSupportError("no directory update")
        }
        _ = try await bank.connection.call(destination: Telephony1.busName, path: path, interface: Self.update, member: "AddIdentificationEntries",
                                           [[Int64(14085550100)].dbusValue, ["Real Bank"].dbusValue])
        _ = try await bank.connection.call(destination: Telephony1.busName, path: path, interface: Self.update, member: "Complete")
    }

    @Test("an impostor registering the real app's Name gets a directory of its own: the real label survives, and Favorites still reach the real app")
    func impostor() async throws {
        let fixture = try await ServiceFixture()
        let bank = try await fixture.provider("Bank")
        try await completeRealBankDirectory(bank)
        try await fixture.root(Self.directory, "SetDirectoryEnabled", [.string("Bank"), .bool(true)])
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550100")]) == [.string("Real Bank"), .bool(false)])

        let impostor = try await SandboxedApp(appID: "org.example.ScamBank", bus: fixture.bus)
        let fake = try await impostor.registerProvider(name: "Bank")
        try await completeDirectory(impostor, fake, labels: [(14085550100, "Scam Bank")])
        // Its own directory, under its app id; the user may turn it on, and the real label still wins for the real app's number.
        try await fixture.root(Self.directory, "SetDirectoryEnabled", [.string("org.example.ScamBank"), .bool(true)])
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550100")]) == [.string("Real Bank"), .bool(false)])
        #expect(try await fixture.root(Self.directory, "ListDirectories") == [.array(element: "(sbtt)", [
            .structure([.string("Bank"), .bool(true), .uint64(0), .uint64(1)]),
            .structure([.string("org.example.ScamBank"), .bool(true), .uint64(0), .uint64(1)]),
        ])])

        // A favorite saved for "Bank" is called through the real Bank, never through the impostor.
        let id = try await fixture.root(Telephony1.Favorites.interface, "Add",
                                        [.string("+15550001"), .string("phone-number"), .string("Mum"), .string("Bank")])
        try await fixture.root(Telephony1.Favorites.interface, "Call", [id[0]])
        #expect(try await bank.nextAction("start")?.args["Handle"] == .string("+15550001"))
    }

    @Test("a sandboxed app reads back of its own call's CallerName only what it supplied or its own directory gave: never the user's favorite or another app's label, by Get, GetAll, GetManagedObjects or a signal; the user reads the full name (found on main: \"Mum\" and \"Real Bank\" read back)")
    func callerNameReadBack() async throws {
        let daemon = try await RunningDaemon()
        let user = try Connection(address: daemon.bus.address)
        func root(_ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: interface, member: member, arguments)
        }
        let bank = try await TestProvider(bus: daemon.bus, name: "Bank", configuration: [:])
        try await completeRealBankDirectory(bank)
        _ = try await root(Self.directory, "SetDirectoryEnabled", [.string("Bank"), .bool(true)])
        _ = try await root(Telephony1.Favorites.interface, "Add", [.string("+15550001"), .string("phone-number"), .string("Mum"), .string("Bank")])

        let spy = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus, throughProxy: true)
        let own = try await spy.registerProvider(name: "Mallory")
        try await completeDirectory(spy, own, labels: [(15550004, "Pizza Place")])
        _ = try await root(Self.directory, "SetDirectoryEnabled", [.string("org.example.Mallory"), .bool(true)])
        let favorite = try await spy.reportIncoming(own, "+15550001")
        let labelled = try await spy.reportIncoming(own, "+14085550100")
        let supplied = try await spy.reportIncoming(own, "+15550003", update: ["LocalizedCallerName": "Own Name"])
        let ownLabel = try await spy.reportIncoming(own, "+15550004")
        let expected = [(favorite, "", "Mum"), (labelled, "", "Real Bank"), (supplied, "Own Name", "Own Name"), (ownLabel, "Pizza Place", "Pizza Place")]
        for (uuid, appReads, userReads) in expected {
            try await spy.expectCallerName(of: uuid, appReads: appReads, userReads: userReads, user: user)
        }
        let managed = try await spy.root("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        let heard = try await spy.heard()
        for secret in ["Mum", "Real Bank"] {
            #expect(!"\(managed)".contains(secret), "GetManagedObjects told \(secret)")
            #expect(!heard.contains { $0.text.contains(secret) }, "a signal told \(secret): \(heard)")
        }
        #expect(heard.contains { $0.member == "InterfacesAdded" && $0.text.contains("Pizza Place") }, "\(heard)")
    }

    @Test("a host app whose Name looks like an app id keeps state apart from that sandboxed app: its own directory and link claim, under host:NAME (found on main: one shared key)")
    func hostNameLikeAppID() async throws {
        let daemon = try await RunningDaemon()
        let user = try Connection(address: daemon.bus.address)
        let host = try await TestProvider(bus: daemon.bus, name: "org.example.Mallory", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        try await completeRealBankDirectory(host)
        let app = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus)
        let provider = try await app.registerProvider(name: "Mallory", ["URLSchemes": ["monkeycall"]])
        try await completeDirectory(app, provider, labels: [(14085550100, "Scam Bank")])
        let listed = try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Self.directory, member: "ListDirectories")
        #expect(listed == [.array(element: "(sbtt)", [
            .structure([.string("host:org.example.Mallory"), .bool(false), .uint64(0), .uint64(1)]),
            .structure([.string("org.example.Mallory"), .bool(false), .uint64(0), .uint64(1)]),
        ])], "\(listed)")
        let links = try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Manager.interface,
                                        member: "ListLinkHandlers")
        #expect(links == [.dictionary(key: "s", value: "s", [(key: .string("monkeycall"), value: .string("host:org.example.Mallory"))])], "\(links)")
    }

    @Test("a sandboxed provider: AppId in its Recents entries and EntryAdded; its notifications carry its app id as desktop-entry, whatever it claims")
    func recentsAndNotifications() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await SandboxedApp(appID: "org.example.PyPhone", bus: daemon.bus)
        let provider = try await app.registerProvider(name: "PyPhone", ["DesktopEntry": "org.example.Bank"])
        let uuid = try await app.reportIncoming(provider, "alice")
        // Named as the user knows it (its app id: no desktop file is exported here), its chosen Name beside.
        let shown = try #require(await server.notified.next(where: { $0.appName == "org.example.PyPhone \u{201C}PyPhone\u{201D}" }))
        #expect(shown.hints["desktop-entry"] == .string("org.example.PyPhone"), "\(shown.hints)")

        let host = try Connection(address: daemon.bus.address)
        let added = try await SignalRecorder(host, MatchRule(interface: Telephony1.Recents.interface))
        try await host.subscribeToTelephony()
        let ended = try await app.call(provider, Telephony1.Provider.interface, "ReportCallEnded", signature: "sst", [uuid, "unanswered", 0])
        #expect(ended.error == nil, "\(ended)")
        let announced = try #require(await added.next("EntryAdded", timeout: .seconds(10)))
        #expect(try announced.arguments().first?.vardict?["AppId"] == .string("org.example.PyPhone"))
        guard case .array(_, let entries)? = try await host.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                                interface: Telephony1.Recents.interface, member: "List",
                                                                [.uint32(10), .uint32(0)]).first else { throw TestSupportError("no Recents") }
        let entry = try #require(entries.first?.vardict)
        #expect(entry["AppId"] == .string("org.example.PyPhone"))
        #expect(entry["CallUUID"] == .string(uuid))
    }

    @Test("a sandboxed app flooding the pending transactions is stopped at its share: the user still answers another app's call")
    func flood() async throws {
        var limits = SwitchboardLimits()
        limits.maximumPendingTransactions = 12
        limits.maximumPendingTransactionsPerApp = 10
        limits.userReservedPendingTransactions = 2
        let fixture = try await ServiceFixture(actionTimeout: 60, limits: limits)
        let flooder = try await SandboxedApp(appID: "org.example.Flood", bus: fixture.bus)
        let provider = try await flooder.registerProvider(name: "Flood")
        let own = try await flooder.reportIncoming(provider, "bob")
        // Transactions on its own call that it never fulfils: each stays pending for a minute.
        var accepted = 0
        var refusal: SandboxedApp.Outcome?
        while refusal == nil && accepted < 50 {
            let outcome = try await flooder.root(Telephony1.CallController.interface, "SetMuted", signature: "sb", [own, accepted % 2 == 0])
            if outcome.error == nil { accepted += 1 } else { refusal = outcome }
        }
        #expect(accepted == 10)
        #expect(refusal?.error == DBusError.Name.limitsExceeded, "\(refusal?.description ?? "")")
        #expect(refusal?.message.contains("org.example.Flood") == true, "\(refusal?.description ?? "")")

        // Another app's call rings; the user answers it from the host.
        let other = try await fixture.provider("Quiet")
        let call = try await other.reportIncoming("alice")
        let answer = try await fixture.control("AnswerCall", [.string(call)])
        #expect(answer.count == 1)
        try await other.perform("answer")
        #expect(await fixture.state(call) == "active")
    }

    @Test("a link scheme stays with the app that declared it first; the user chooses another with SetLinkHandler (saved); a sandboxed app may not choose")
    func linkSchemes() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let fixture = try await ServiceFixture(notifications: true) { $0.dataDirectory = data }
        let server = try #require(fixture.notificationServer)
        let first = try await fixture.provider("Acme", ["URLSchemes": ["monkeycall"].dbusValue])
        let impostor = try await SandboxedApp(appID: "org.example.Impostor", bus: fixture.bus)
        let later = try await impostor.registerProvider(name: "Acme", ["URLSchemes": ["monkeycall"]])
        #expect(try await fixture.root(Manager.interface, "ListLinkHandlers") == [["monkeycall": "Acme"].dbusValue])
        _ = try await fixture.root(Manager.interface, "OpenURL", [.string("monkeycall:alice")])
        try await server.confirmLink()
        #expect(try await first.nextAction("start")?.args["Handle"] == .string("alice"))

        let choose = try await impostor.root(Manager.interface, "SetLinkHandler", signature: "ss", ["monkeycall", "org.example.Impostor"])
        #expect(choose.isAccessDenied && choose.message.contains("org.example.Impostor"), "\(choose)")
        expectDeniedList(try await impostor.root(Manager.interface, "ListLinkHandlers"))

        // The user gives it to the other app; it stays so after a restart.
        try await fixture.root(Manager.interface, "SetLinkHandler", [.string("monkeycall"), .string("org.example.Impostor")])
        let opened = try await fixture.root(Manager.interface, "OpenURL", [.string("monkeycall:bob")])
        #expect(opened.count == 1)
        let invalid = await dbusError { try await fixture.root(Manager.interface, "SetLinkHandler", [.string("not a scheme"), .string("Acme")]) }
        #expect(invalid?.name == DBusError.Name.invalidArgs)
        await fixture.service.settleStorage()
        let restarted = try await ServiceFixture { $0.dataDirectory = data }
        #expect(try await restarted.root(Manager.interface, "ListLinkHandlers") == [["monkeycall": "org.example.Impostor"].dbusValue])
        _ = later
    }

    func expectDeniedList(_ outcome: SandboxedApp.Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.isAccessDenied, "\(outcome)", sourceLocation: sourceLocation)
    }

    @Test("a new app's directory is off until the user agrees: one notification asks, Enable turns it on; directories enabled before stay enabled")
    func directoryConsent() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await SandboxedApp(appID: "org.example.PyPhone", bus: daemon.bus)
        let provider = try await app.registerProvider(name: "PyPhone")
        try await completeDirectory(app, provider, labels: [(14085550123, "Pizza Place")])
        // No desktop file exported for it: the prompt names the app by its id; its chosen Name only in the body.
        let asked = try #require(await server.notified.next(where: { $0.summary == "org.example.PyPhone wants to identify and block callers" }))
        #expect(asked.body.contains("PyPhone"), "\(asked.body)")
        #expect(asked.actions == ["enable-directory", "Enable", "not-now", "Not now"], "\(asked.actions)")
        let host = try Connection(address: daemon.bus.address)
        func directories() async throws -> [DBusValue] {
            try await host.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Self.directory, member: "ListDirectories")
        }
        func identify() async throws -> [DBusValue] {
            try await host.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Self.directory, member: "Identify",
                                [.string("+14085550123")])
        }
        #expect(try await directories() == [.array(element: "(sbtt)", [.structure([.string("org.example.PyPhone"), .bool(false), .uint64(0), .uint64(1)])])])
        #expect(try await identify() == [.string(""), .bool(false)])

        try server.invoke(asked.id, "enable-directory")
        // The button comes back through the notification server: wait for its effect, with a deadline.
        let deadline = ContinuousClock.now + .seconds(10)
        while try await identify() != [.string("Pizza Place"), .bool(false)] && ContinuousClock.now < deadline { await Task.yield() }
        #expect(try await identify() == [.string("Pizza Place"), .bool(false)])

        // A second update asks nothing more.
        try await completeDirectory(app, provider, labels: [(14085550123, "Pizza Palace")])
        #expect(await server.notified.next(timeout: .milliseconds(500), where: { $0.summary.contains("wants to identify") }) == nil)
        #expect(try await identify() == [.string("Pizza Palace"), .bool(false)])
    }

    @Test("prompts name a sandboxed app by its exported desktop file's Name and its app id, never by the Name it chose (found on main: \"Alpha wants to identify and block callers\")")
    func promptsNameTheRealApp() async throws {
        let bus = try await PrivateBus.start()
        // Where `flatpak install --user` exports the app's desktop file.
        let exports = bus.directory.appendingPathComponent("data/flatpak/exports/share/applications")
        try writeDesktopFile("org.example.Mallory.desktop", in: exports, name: "Mallory Phone", exec: "mallory", more: "[Desktop Action x]\nName=Other\n")
        let daemon = try await RunningDaemon(bus: bus, owningBus: true)
        let server = try await NotificationServer(address: bus.address)
        let app = try await SandboxedApp(appID: "org.example.Mallory", bus: bus)
        let provider = try await app.registerProvider(name: "Alpha", ["URLSchemes": ["monkeycall"]])
        try await completeDirectory(app, provider, labels: [(14085550123, "Pizza Place")])
        let asked = try #require(await server.notified.next(where: { $0.summary.contains("wants to identify") }))
        #expect(asked.summary == "Mallory Phone (org.example.Mallory) wants to identify and block callers", "\(asked.summary)")
        #expect(asked.body.contains("\u{201C}Alpha\u{201D}"), "\(asked.body)")
        // The link question too.
        let link = try await app.root(Telephony1.Manager.interface, "OpenURL", signature: "s", ["monkeycall:bob"])
        #expect(link.error == nil, "\(link)")
        let question = try #require(await server.notified.next(where: { $0.summary.hasPrefix("Call bob") }))
        #expect(question.summary == "Call bob with Mallory Phone (org.example.Mallory)?", "\(question.summary)")
        _ = daemon
    }

    @Test("a link's question names the sandboxed app that asked when another app will call (found on main: only the app that will call was named)")
    func linkQuestionNamesTheAsker() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let acme = try await TestProvider(bus: daemon.bus, name: "Acme", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        let app = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus)
        let opened = try await app.root(Telephony1.Manager.interface, "OpenURL", signature: "s", ["monkeycall:bob"])
        #expect(opened.error == nil, "\(opened)")
        let question = try #require(await server.notified.next(where: { $0.summary.hasPrefix("Call bob") }))
        #expect(question.summary == "Call bob with Acme?", "\(question.summary)")
        #expect(question.body.hasPrefix("org.example.Mallory asks to call bob."), "\(question.body)")
        _ = acme
    }

    @Test("directories saved before directories needed the user's consent (no flag) stay enabled")
    func consentMigration() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("consent-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        do {
            let fixture = try await ServiceFixture { $0.dataDirectory = data }
            try await completeRealBankDirectory(try await fixture.provider("Bank"))
            await fixture.service.settleStorage()
        }
        // As the version before saved it: a directory, no flag for it, and no mark of the migration.
        try FileManager.default.removeItem(atPath: data + "/directories/enabled.json")
        try FileManager.default.removeItem(atPath: data + "/directories/consent-migrated")
        let fixture = try await ServiceFixture { $0.dataDirectory = data }
        #expect(try await fixture.root(Self.directory, "ListDirectories")
                == [.array(element: "(sbtt)", [.structure([.string("Bank"), .bool(true), .uint64(0), .uint64(1)])])])
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550100")]) == [.string("Real Bank"), .bool(false)])
    }

    @Test("consent is atomic: a first Complete whose \"off\" flag cannot be written saves nothing and says so, and the next start enables nothing (found on main: Complete succeeded without the flag, and the next start enabled the directory)")
    func consentIsAtomic() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("consent-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        do {
            let fixture = try await ServiceFixture { $0.dataDirectory = data }
            // The flags cannot be replaced: a folder (not empty) stands where they go, as a full disk would refuse them.
            try FileManager.default.createDirectory(atPath: data + "/directories/enabled.json/in-the-way", withIntermediateDirectories: true)
            let bank = try await fixture.provider("Bank")
            guard case .objectPath(let path)? = try await bank.call("BeginCallDirectoryUpdate", [.bool(false)]).first else {
                throw TestSupportError("no directory update")
            }
            _ = try await bank.connection.call(destination: Telephony1.busName, path: path, interface: Self.update, member: "AddIdentificationEntries",
                                               [[Int64(14085550100)].dbusValue, ["Real Bank"].dbusValue])
            await #expect(throws: DBusError.self) {
                _ = try await bank.connection.call(destination: Telephony1.busName, path: path, interface: Self.update, member: "Complete")
            }
            #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550100")]) == [.string(""), .bool(false)])
            await fixture.service.settleStorage()
        }
        // The disk has room again; the service starts anew.
        try FileManager.default.removeItem(atPath: data + "/directories/enabled.json")
        let fixture = try await ServiceFixture { $0.dataDirectory = data }
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550100")]) == [.string(""), .bool(false)])
        let listed = try await fixture.root(Self.directory, "ListDirectories")
        #expect(!"\(listed)".contains("true"), "\(listed)")
    }

    @Test("monkeycall links shows which app opens each scheme and chooses another, for good")
    func linksCommand() async throws {
        let daemon = try await RunningDaemon()
        #expect(try await daemon.cli("links").stdout.contains("no app has declared a link scheme yet"))
        let first = try await TestProvider(bus: daemon.bus, name: "Acme", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        let second = try await TestProvider(bus: daemon.bus, name: "Other", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        #expect(try await daemon.cli("links").stdout.contains("monkeycall  Acme"))
        let chosen = try await daemon.cli("links", "monkeycall", "Other")
        #expect(chosen.status == 0 && chosen.stdout.contains("monkeycall: links open in Other"), "\(chosen.stdout)\(chosen.stderr)")
        let notifications = try await NotificationServer(address: daemon.bus.address)
        #expect(try await daemon.cli("open", "monkeycall:alice").status == 0)
        try await notifications.confirmLink()
        #expect(try await second.nextAction("start")?.args["Handle"] == .string("alice"))
        let incomplete = try await daemon.cli("links", "monkeycall")
        #expect(incomplete.status != 0 && incomplete.stderr.contains("say which app opens monkeycall"), "\(incomplete.stderr)")
        _ = first
    }
}
