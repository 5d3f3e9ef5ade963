import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Plasma 6's own KRunner (`krunner --daemon`, plasma-workspace 6.3 from Debian 13's desktop stage,
/// `DebianStage`) under an Xvfb of the test's, on the test's session bus, with the service's
/// runner declared as the package installs it (`desktop/monkeycall-krunner.desktop`, in the
/// user's own `krunner/dbusplugins/`).
///
/// What it lists is read from its window through AT-SPI, as a screen reader reads it, and a row is
/// clicked with the pointer (`Resources/krunner-atspi.py`): KRunner's D-Bus API (`org.kde.krunner.App`:
/// `display`, `query`, `querySingleRunner`, `toggleDisplay`…) only opens the window, and tells
/// nothing of what it shows; the runner's `Match` replies on the bus are what the service offers,
/// not what KRunner kept, sorted and drew.
final class KRunnerDesk: @unchecked Sendable {
    static let stage = DebianStage.trixieDesktop
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/krunner-atspi.py").path
    static let accessibilityService = "/usr/share/dbus-1/services/org.a11y.Bus.service"

    /// Why the test cannot run here; nil when it can.
    static let unavailableReason: String? = {
        if let reason = stage.unavailableReason(needing: ["/usr/bin/krunner"]) { return reason }
        for (path, package) in [("/usr/bin/Xvfb", "xvfb"), (accessibilityService, "at-spi2-core"),
                                ("/usr/lib/python3/dist-packages/pyatspi", "python3-pyatspi"), ("/usr/bin/import", "imagemagick")]
        where !FileManager.default.fileExists(atPath: path) {
            return "\(path) is missing (apt-get install \(package))"
        }
        return nil
    }()

    let display: VirtualDisplay
    let krunner: ChildProcess
    /// For the AT-SPI reader and `import`, on this machine: the X server, the session bus, the
    /// accessibility bus.
    let hostEnvironment: [String: String]
    /// From spawning krunner until it owned org.kde.krunner.
    let startTime: Duration
    private let connection: Connection

    private init(display: VirtualDisplay, krunner: ChildProcess, hostEnvironment: [String: String], startTime: Duration, connection: Connection) {
        self.display = display
        self.krunner = krunner
        self.hostEnvironment = hostEnvironment
        self.startTime = startTime
        self.connection = connection
    }

    /// An X server, the accessibility bus on `bus`, and krunner in the stage, on `bus`, once it owns
    /// `org.kde.krunner`.
    static func start(bus: PrivateBus) async throws -> KRunnerDesk {
        let display = try await VirtualDisplay.start()
        // krunner's home, its runner declaration and runtime folder, in the bus's folder (under
        // the temporary folder, bound into the stage at the same path).
        let folder = bus.directory.appendingPathComponent("krunner")
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let files = FileManager.default
        for name in ["home", "data/krunner/dbusplugins", "config", "cache"] {
            try files.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        }
        try files.createDirectory(atPath: path("runtime"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try files.copyItem(atPath: repository.appendingPathComponent("desktop/monkeycall-krunner.desktop").path,
                           toPath: path("data/krunner/dbusplugins/monkeycall.desktop"))

        // The accessibility bus, started by the test's bus from at-spi2-core's service file as in a
        // session, before krunner: Qt opens its bridge only to a bus it finds there. The bus
        // launcher and the registry it starts get the X server (the registry makes the pointer's
        // events there) and a runtime folder under /tmp, where its socket goes.
        try files.copyItem(atPath: accessibilityService, toPath: bus.servicesDirectory.appendingPathComponent("org.a11y.Bus.service").path)
        let activation = "{'DISPLAY': '\(display.name)', 'XDG_RUNTIME_DIR': '\(path("runtime"))'}"
        let told = try await ChildProcess.run("/usr/bin/gdbus", ["call", "--address", bus.address, "--dest", "org.freedesktop.DBus", "--object-path",
                                                                 "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.UpdateActivationEnvironment", activation])
        guard told.status == 0 else { throw TestSupportError("UpdateActivationEnvironment: \(told.stderr)") }
        let connection = try Connection(address: bus.address)
        let reply = try await connection.call(destination: "org.a11y.Bus", path: "/org/a11y/bus", interface: "org.a11y.Bus", member: "GetAddress",
                                              timeout: Deadlines.stretched(.seconds(30)))
        guard case .string(let accessibility)? = reply.first else { throw TestSupportError("org.a11y.Bus.GetAddress answered \(reply)") }

        let spawned = ContinuousClock.now
        let krunner = try stage.spawn("/usr/bin/krunner", ["--daemon"], environment: [
            "HOME": path("home"), "XDG_DATA_HOME": path("data"), "XDG_CONFIG_HOME": path("config"), "XDG_CACHE_HOME": path("cache"),
            "XDG_RUNTIME_DIR": path("runtime"), "LANG": "C.UTF-8",
            "DISPLAY": display.name, "QT_QPA_PLATFORM": "xcb",
            "DBUS_SESSION_BUS_ADDRESS": bus.address,
            // No system bus: nothing of the machine's (UDisks, logind) reaches the stage.
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + path("no-system-bus"),
            // Its window to AT-SPI, always, on this test's accessibility bus.
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "AT_SPI_BUS_ADDRESS": accessibility,
        ])
        let deadline = ContinuousClock.now + Deadlines.stretched(.seconds(60))
        while try await connection.nameOwner("org.kde.krunner") == nil {
            guard krunner.isRunning else { throw TestSupportError("krunner exited: \(krunner.output.suffix(4000))") }
            guard ContinuousClock.now < deadline else { throw TestSupportError("krunner took no org.kde.krunner in 60 s: \(krunner.output.suffix(4000))") }
            try await Task.sleep(for: .milliseconds(50))  // a poll of the bus, bounded by the deadline
        }
        var host = bus.environment
        host["DISPLAY"] = display.name
        host["AT_SPI_BUS_ADDRESS"] = accessibility
        return KRunnerDesk(display: display, krunner: krunner, hostEnvironment: host, startTime: ContinuousClock.now - spawned, connection: connection)
    }

    /// Ends krunner's namespace, and everything krunner started in it.
    func stop() {
        krunner.kill()
        connection.close()
    }

    deinit { stop() }

    /// What Alt+Space and typing do: KRunner's window opens on `text`, and it asks its runners.
    func query(_ text: String) async throws {
        try await connection.call(destination: "org.kde.krunner", path: "/App", interface: "org.kde.krunner.App", member: "query", [.string(text)])
    }

    /// A row of KRunner's list, as AT-SPI reads it.
    struct Row: Decodable, Sendable {
        let name: String
        let description: String
        let labels: [String]
        let x, y, width, height: Int
    }

    /// Every row listed, once a row named `name` is there.
    func rows(once name: String) async throws -> [Row] {
        let output = try await reader("rows", name)
        return try JSONDecoder().decode([Row].self, from: Data(output.utf8))
    }

    /// A pointer click on the row named `name`.
    func click(_ name: String) async throws {
        _ = try await reader("click", name)
    }

    private func reader(_ step: String, _ name: String) async throws -> String {
        let timeout = Int(Deadlines.stretched(.seconds(30)).components.seconds)
        let run = try await ChildProcess.run("/usr/bin/python3", [Self.script, step, name, "--timeout", String(timeout)],
                                             environment: hostEnvironment, timeout: .seconds(timeout + 30))
        guard run.status == 0 else { throw TestSupportError("\(step) \(name): \(run.stderr)\nkrunner: \(krunner.output.suffix(3000))") }
        return run.stdout
    }

    /// A PNG of KRunner's window, from the X server.
    func picture(to url: URL) async throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let shot = try await ChildProcess.run("/usr/bin/import", ["-window", "KRunner", url.path], environment: hostEnvironment)
        guard shot.status == 0 else { throw TestSupportError("import -window KRunner: \(shot.stderr)") }
    }
}

@Suite("KRunner 6 for real: Plasma 6.3's krunner from Debian 13 lists the user's contact and calls her")
struct KRunnerTests {
    @Test("Plasma 6.3's krunner, on the test's bus with the package's runner file: \"lovelace\" lists Ada Lovelace (a vCard contact) as MonkeyCall's one row, with her number and the app that calls; a click on it starts the call in that app (a picture in docs/pictures/krunner-6.png with MONKEYCALL_SCREENSHOTS=1)",
          .enabled(if: KRunnerDesk.unavailableReason == nil, Comment(rawValue: KRunnerDesk.unavailableReason ?? "")))
    func listsAndCalls() async throws {
        let began = ContinuousClock.now
        let rig = try await SearchRig()
        let app = try await rig.provider("PyPhone")
        let desk = try await KRunnerDesk.start(bus: rig.bus)
        defer { desk.stop() }
        try await desk.query("lovelace")
        let rows = try await desk.rows(once: "Ada Lovelace")
        let ada = try #require(rows.first { $0.name == "Ada Lovelace" })
        // The runner's name heads its category, then the match's text and its subtext, as drawn.
        #expect(ada.labels == ["MonkeyCall", "Ada Lovelace", "mobile +44 20 7946 0001 · with PyPhone"], "\(rows)")
        #expect(ada.description == "mobile +44 20 7946 0001 · with PyPhone, in category MonkeyCall", "\(rows)")
        #expect(rows.filter { $0.description.hasSuffix("in category MonkeyCall") }.count == 1, "\(rows)")

        let keep = ProcessInfo.processInfo.environment["MONKEYCALL_SCREENSHOTS"] == "1"
        let picture = keep ? KRunnerDesk.repository.appendingPathComponent("docs/pictures/krunner-6.png")
            : FileManager.default.temporaryDirectory.appendingPathComponent("krunner-6-\(UUID().uuidString.prefix(8)).png")
        try await desk.picture(to: picture)
        #expect(try Data(contentsOf: picture).starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
        print("krunner: picture at \(picture.path)")
        if !keep { try? FileManager.default.removeItem(at: picture) }

        // The row clicked: KRunner runs the match (Run on the service's runner), and the call starts in the app.
        try await desk.click("Ada Lovelace")
        let start = try #require(await app.nextAction("start", timeout: .seconds(20)), "the click called nobody: \(rig.daemon.daemon.output.suffix(3000))")
        #expect(start.args["Handle"] == .string("+442079460001"), "\(start.args)")
        print("krunner: on the bus \(desk.startTime) after its start; the whole test \(ContinuousClock.now - began)")
    }
}
