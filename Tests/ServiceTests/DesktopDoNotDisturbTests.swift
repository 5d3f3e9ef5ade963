import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// GNOME's settings as the daemon and `gsettings` see them: a keyfile in a
/// folder of the test's own, with GNOME's schema (or, where it is not
/// installed, the same key in a schema compiled for the test).
struct GnomeSettings {
    let environment: [String: String]

    init(in folder: URL) async throws {
        var environment = ["GSETTINGS_BACKEND": "keyfile", "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
        let installed = try await ChildProcess.run("/usr/bin/gsettings", ["list-keys", "org.gnome.desktop.notifications"],
                                                   environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        if installed.status != 0 {
            let schemas = folder.appendingPathComponent("schemas")
            try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
            try """
            <schemalist>
              <schema id="org.gnome.desktop.notifications" path="/org/gnome/desktop/notifications/">
                <key name="show-banners" type="b"><default>true</default></key>
              </schema>
            </schemalist>
            """.write(to: schemas.appendingPathComponent("org.gnome.desktop.notifications.gschema.xml"), atomically: true, encoding: .utf8)
            let compiled = try await ChildProcess.run("/usr/bin/glib-compile-schemas", [schemas.path])
            guard compiled.status == 0 else { throw TestSupportError("glib-compile-schemas failed: \(compiled.stderr)") }
            environment["GSETTINGS_SCHEMA_DIR"] = schemas.path
        }
        self.environment = environment
    }

    /// `gsettings set org.gnome.desktop.notifications show-banners VALUE`, as the user would.
    func setShowBanners(_ value: Bool) async throws {
        let result = try await ChildProcess.run("/usr/bin/gsettings", ["set", "org.gnome.desktop.notifications", "show-banners", "\(value)"],
                                                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        guard result.status == 0 else { throw TestSupportError("gsettings set failed: \(result.stderr)") }
    }
}

@Suite("The desktop's Do Not Disturb")
struct DesktopDoNotDisturbTests {
    static let filtered = APIError.filteredByDoNotDisturb.rawValue

    /// Records the Manager's PropertiesChanged, to wait for a new DoNotDisturbSource.
    static func sourceChanges(_ connection: Connection) async throws -> SignalRecorder {
        let recorder = try await SignalRecorder(connection, MatchRule(path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Properties",
                                                                      member: "PropertiesChanged", arg0: Telephony1.Manager.interface))
        try await connection.subscribeToTelephony()
        return recorder
    }

    static func next(_ source: String, in changes: SignalRecorder) async -> Bool {
        await changes.next(where: { $0.count > 1 && $0[1].vardict?["DoNotDisturbSource"] == .string(source) }) != nil
    }

    static func lastStatus(_ connection: Connection) async throws -> DBusValue? {
        let reply = try await connection.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Recents.interface,
                                              member: "List", [.uint32(1), .uint32(0)])
        guard case .array(_, let items)? = reply.first else { return nil }
        return items.first?.vardict?["Status"]
    }

    @Test("GNOME's Do Not Disturb (show-banners false) filters calls, read at start and followed live through gsettings")
    func gnome() async throws {
        let bus = try await PrivateBus.start()
        let gnome = try await GnomeSettings(in: bus.directory)
        try await gnome.setShowBanners(false)
        let daemon = try await RunningDaemon(bus: bus, environment: gnome.environment)
        let status = try await daemon.cli("dnd", "status")
        #expect(status.stdout.contains("Do Not Disturb: on, from GNOME"), "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("MonkeyCall's own Do Not Disturb: off"), "\(status.stdout)")

        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        let listener = try Connection(address: bus.address)
        let changes = try await Self.sourceChanges(listener)
        #expect(await dbusError { try await app.reportIncoming("stranger") }?.name == Self.filtered)
        #expect(try await Self.lastStatus(listener) == .string("filtered"))
        // The same exceptions as ours: a repeated call within three minutes rings.
        #expect(await dbusError { try await app.reportIncoming("stranger") } == nil)

        try await gnome.setShowBanners(true)
        #expect(await Self.next("none", in: changes))
        #expect(await dbusError { try await app.reportIncoming("newcomer") } == nil)
        #expect(try await daemon.cli("dnd", "status").stdout.contains("Do Not Disturb: off"))

        try await gnome.setShowBanners(false)
        #expect(await Self.next("gnome", in: changes))
        #expect(await dbusError { try await app.reportIncoming("another stranger") }?.name == Self.filtered)
        // Ours, when on, is the one in force.
        #expect(try await daemon.cli("dnd", "on").stdout.contains("Do Not Disturb: on, MonkeyCall's own"))
        #expect(await Self.next("monkeycall", in: changes))
    }

    @Test("the notification server's Inhibited filters calls, followed through PropertiesChanged and across a restart of the server")
    func notificationServer() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let changes = try await Self.sourceChanges(fixture.controller)

        let server = try await NotificationServer(address: fixture.bus.address, inhibited: true)
        #expect(await Self.next("notification-server", in: changes))
        #expect(await dbusError { try await app.reportIncoming("stranger") }?.name == Self.filtered)
        #expect(try await Self.lastStatus(fixture.controller) == .string("filtered"))
        try await fixture.root(Telephony1.Favorites.interface, "Add", [.string("mum"), .string("generic"), .string("Mum"), .string("Monkey")])
        #expect(await dbusError { try await app.reportIncoming("mum") } == nil)

        server.setInhibited(false)
        #expect(await Self.next("none", in: changes))
        #expect(await dbusError { try await app.reportIncoming("newcomer") } == nil)
        server.setInhibited(true)
        #expect(await Self.next("notification-server", in: changes))

        // The server goes away: its Do Not Disturb with it; a new one is read afresh.
        server.stop()
        #expect(await Self.next("none", in: changes))
        #expect(await dbusError { try await app.reportIncoming("caller 1") } == nil)
        let restarted = try await NotificationServer(address: fixture.bus.address, inhibited: true)
        #expect(await Self.next("notification-server", in: changes))
        #expect(await dbusError { try await app.reportIncoming("caller 2") }?.name == Self.filtered)
        let source = try await fixture.root("org.freedesktop.DBus.Properties", "Get", [.string(Telephony1.Manager.interface), .string("DoNotDisturbSource")])
        #expect(source.first?.unwrappedVariant == .string("notification-server"))
        restarted.setInhibited(false)
        #expect(await Self.next("none", in: changes))
    }

    @Test("without GNOME's schema or a system bus, the daemon says so once each and calls ring and connect")
    func missingDesktop() async throws {
        let bus = try await PrivateBus.start()
        let empty = bus.directory.appendingPathComponent("no-data-dirs")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        // No schemas anywhere: XDG_DATA_DIRS is where GSettings looks for them.
        // Without the call controls: each answered call's ongoing notification would come between the ringing ones.
        let daemon = try await RunningDaemon(bus: bus, ["--system-bus-address", "unix:path=\(bus.directory.path)/nothing-here", "--no-call-controls"],
                                             environment: ["XDG_DATA_DIRS": empty.path])
        let server = try await NotificationServer(address: bus.address)
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        let controller = try Connection(address: bus.address)
        for caller in ["alice", "bob"] {
            let uuid = try await app.reportIncoming(caller)
            #expect(await server.notified.next()?.body == caller)
            try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                                      member: "AnswerCall", [.string(uuid)])
            try await app.perform("answer")
            try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                                      member: "EndCall", [.string(uuid)])
            try await app.perform("end")
        }
        #expect(await daemon.daemon.waitForOutput(containing: "logind is not available"))
        let output = daemon.daemon.output
        #expect(output.components(separatedBy: "logind is not available").count == 2, "\(output)")
        #expect(output.components(separatedBy: "GNOME's notification settings").count == 2, "\(output)")
        #expect(try await daemon.cli("dnd", "status").stdout.contains("Do Not Disturb: off"))
    }
}
