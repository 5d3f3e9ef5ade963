import DBus
import Foundation

/// A real GNOME Shell 43, headless (`gnome-shell --headless --virtual-monitor 1280x800 --wayland
/// --no-x11`), as the notification server of a test's session bus: what a GNOME user sees of a
/// call, read back from the shell itself (`Main.messageTray`), clicked with real pointer events,
/// locked and unlocked, and photographed.
///
/// The shell runs in a temporary home of its own (settings in a keyfile there, never the user's
/// dconf), with a private system bus (`GnomeShellSystemBus`: logind and GDM stand-ins, without
/// which it dies at start or offers no lock screen) and a test-only extension
/// (`GnomeShellExtension`) that opens `org.gnome.Shell.Eval` and `Screenshot` to the tests. Its
/// notification service (`org.gnome.Shell.Notifications`, the gjs program that owns
/// `org.freedesktop.Notifications` and hands each call to the shell) is D-Bus activated on the
/// test's bus, as in a session: its service file goes into the bus's services folder.
///
/// Children die with the test process (`ChildProcess`); the activated notification service dies
/// with its bus, or on `stop()`. The stage reads shell internals that change between versions: it
/// runs only on GNOME Shell 43 (Debian 12), and `start` throws `Unavailable` elsewhere, as where
/// gnome-shell, gjs or python3-dbusmock is not installed.
public final class GnomeShellStage: @unchecked Sendable {
    public static let executable = "/usr/bin/gnome-shell"
    static let gjs = "/usr/bin/gjs"
    static let notificationServiceFile = "/usr/share/dbus-1/services/org.gnome.Shell.Notifications.service"
    public static let notificationServiceName = "org.gnome.Shell.Notifications"
    public static let supportedMajorVersion = 43

    /// The stage cannot run on this machine (a package missing, another GNOME Shell version): a
    /// test skips rather than fails.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Why the stage cannot run here; nil when it can. Asked once (it runs `gnome-shell --version`).
    public static let unavailableReason: String? = {
        let files = FileManager.default
        for (path, package) in [(executable, "gnome-shell"), (gjs, "gjs"), (notificationServiceFile, "gnome-shell"),
                                (GnomeShellSystemBus.python, "python3"), (GnomeShellSystemBus.logindTemplate, "python3-dbusmock")]
        where !files.fileExists(atPath: path) {
            return "\(path) is missing (apt-get install \(package))"
        }
        guard let version = try? GnomeShellStage.installedVersion() else { return "gnome-shell --version did not answer" }
        guard version.hasPrefix("\(supportedMajorVersion).") else {
            return "GNOME Shell \(version) is installed; the stage reads the internals of \(supportedMajorVersion)"
        }
        return nil
    }()

    public static var isAvailable: Bool { unavailableReason == nil }

    /// "43.9" from "GNOME Shell 43.9".
    static func installedVersion() throws -> String {
        let reader = FirstLineReader()
        let child = try Spawned(executable, ["--version"], environment: ProcessInfo.processInfo.environment,
                                onOutput: { isStderr, data in if !isStderr { reader.add(data) } }, onExit: { _ in reader.finish() })
        defer { child.signal(SIGKILL) }
        guard let line = reader.wait(seconds: 20), let version = line.split(separator: " ").last else {
            throw TestSupportError("gnome-shell --version printed nothing")
        }
        return String(version)
    }

    /// The session bus the shell serves notifications on (the test's).
    public let bus: PrivateBus
    /// The stage's home, settings, runtime folder and extension; removed on `stop()`.
    public let folder: URL
    /// From spawning gnome-shell until it was ready for a test (start-up done, overview hidden,
    /// start-up notifications gone), and until its notification service owned the name.
    public private(set) var shellStartTime: Duration = .zero
    /// The whole `start`: the system bus and its stand-ins too.
    public private(set) var stageStartTime: Duration = .zero

    private let system: GnomeShellSystemBus
    private let shell: ChildProcess
    /// The bus's child, not ours: ended on `stop()`.
    private var notificationService: pid_t?
    /// Ours, on the session bus: Eval, Screenshot.
    private let connection: Connection

    private init(bus: PrivateBus, folder: URL, system: GnomeShellSystemBus, shell: ChildProcess, connection: Connection) {
        self.bus = bus
        self.folder = folder
        self.system = system
        self.shell = shell
        self.connection = connection
    }

    /// What the shell printed, for messages on failure.
    public var output: String { shell.output }

    /// The shell's settings as another program of the session reads them (the keyfile in the
    /// stage's folder): for a daemon that follows GNOME's settings.
    public var settingsEnvironment: [String: String] {
        Self.environment(folder).filter { ["GSETTINGS_BACKEND", "XDG_CONFIG_HOME", "XDG_CURRENT_DESKTOP"].contains($0.key) }
    }

    /// `gsettings set SCHEMA KEY VALUE`, as the user would: the shell sees it at once.
    public func set(_ schema: String, _ key: String, _ value: String) async throws {
        let result = try await ChildProcess.run("/usr/bin/gsettings", ["set", schema, key, value],
                                                environment: ProcessInfo.processInfo.environment.merging(settingsEnvironment) { $1 })
        guard result.status == 0 else { throw TestSupportError("gsettings set \(schema) \(key) \(value): \(result.stderr)") }
    }

    // MARK: Starting and stopping

    /// Starts the shell as the notification server of `bus`, and returns once the shell is ready
    /// and `org.freedesktop.Notifications` is its. `environment`: added to the shell's (a
    /// `SoundServer`'s, to hear the sounds the shell plays). Throws `Unavailable` where the stage
    /// cannot run. One stage per bus.
    /// `installing`: files put in the stage's `share` data folder before the shell starts, by path
    /// under it (a desktop file, a search provider's `.ini`), as a package installs them.
    public static func start(bus: PrivateBus, environment extra: [String: String] = [:], installing files: [String: String] = [:]) async throws -> GnomeShellStage {
        if let unavailableReason { throw Unavailable(description: unavailableReason) }
        let began = ContinuousClock.now
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-gnome-\(UUID().uuidString.prefix(8))")
        let system: GnomeShellSystemBus
        do {
            try prepare(folder, bus: bus)
            for (path, contents) in files {
                let file = folder.appendingPathComponent("share").appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(contents.utf8).write(to: file)
            }
            system = try await GnomeShellSystemBus.start()
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        var environment = bus.environment.merging(Self.environment(folder)) { $1 }
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = system.address
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "LANGUAGE", "LANG"] { environment[name] = nil }
        environment.merge(extra) { $1 }

        let spawned = ContinuousClock.now
        let shell: ChildProcess
        let connection: Connection
        do {
            shell = try ChildProcess(executable, ["--headless", "--virtual-monitor", "1280x800", "--wayland", "--no-x11"], environment: environment)
            // A shell started already dies with its ChildProcess, released here.
            connection = try Connection(address: bus.address)
        } catch {
            system.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        let stage = GnomeShellStage(bus: bus, folder: folder, system: system, shell: shell, connection: connection)
        do {
            // Cold (first start after boot, files not cached) it takes about 6 s alone; under the
            // whole suite's load on 2 cores, much longer.
            guard await shell.waitForOutput(containing: GnomeShellExtension.readyLine, timeout: .seconds(120)) else {
                throw TestSupportError("gnome-shell did not get ready (\(shell.isRunning ? "still running" : "exited")): \(shell.output.suffix(6000))")
            }
            try await connection.waitForName(NotificationServer.name, startedBy: shell, timeout: .seconds(60))
            stage.shellStartTime = ContinuousClock.now - spawned
            stage.notificationService = try await stage.notificationServicePID()
            // Readiness as the shell's own Eval tells it: start-up over, no notification left.
            let ready = try await stage.eval("Main.layoutManager._startingUp === false && Main.messageTray.getSources().length === 0")
            guard ready == "true" else { throw TestSupportError("gnome-shell is not ready after start: Eval says \(ready)") }
        } catch {
            await stage.stop()
            throw error
        }
        stage.stageStartTime = ContinuousClock.now - began
        return stage
    }

    /// Home, settings, runtime folder and extension in `folder`; the notification service's file
    /// in the bus's services folder.
    private static func prepare(_ folder: URL, bus: PrivateBus) throws {
        let files = FileManager.default
        for name in ["home", "config/glib-2.0/settings", "data", "cache", "state", "share/applications"] {
            try files.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        // The Wayland socket goes there; GLib wants it private.
        try files.createDirectory(at: folder.appendingPathComponent("runtime"), withIntermediateDirectories: true,
                                  attributes: [.posixPermissions: 0o700])
        try writeClosingOnExec(settings, to: folder.appendingPathComponent("config/glib-2.0/settings/keyfile"))
        try GnomeShellExtension.install(dataDirectory: folder.appendingPathComponent("share"))
        let service = bus.servicesDirectory.appendingPathComponent("\(notificationServiceName).service")
        if !files.fileExists(atPath: service.path) {
            try writeClosingOnExec(try String(contentsOfFile: notificationServiceFile, encoding: .utf8), to: service)
        }
    }

    /// The shell's environment: a session of its own in `folder`, as GDM would start it.
    /// `share` comes first in XDG_DATA_DIRS: the stage's extension, and desktop files a test adds.
    static func environment(_ folder: URL) -> [String: String] {
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        return [
            "HOME": path("home"), "XDG_CONFIG_HOME": path("config"), "XDG_DATA_HOME": path("data"),
            "XDG_CACHE_HOME": path("cache"), "XDG_STATE_HOME": path("state"), "XDG_RUNTIME_DIR": path("runtime"),
            "XDG_DATA_DIRS": path("share") + ":/usr/local/share:/usr/share",
            "XDG_CURRENT_DESKTOP": "GNOME", "XDG_SESSION_DESKTOP": "gnome", "GNOME_SHELL_SESSION_MODE": "user",
            "XDG_SESSION_TYPE": "wayland", "XDG_SESSION_CLASS": "user", "XDG_SESSION_ID": GnomeShellSystemBus.sessionID,
            // Settings in the keyfile below, which the shell reads and watches: never dconf.
            "GSETTINGS_BACKEND": "keyfile",
            // The shell's own texts in English, whatever the machine's locale.
            "LC_ALL": "C.UTF-8",
            // No accessibility bus to look for.
            "NO_AT_BRIDGE": "1",
        ]
    }

    /// The stage's extension on; no welcome tour (it would open over everything for a user other
    /// than root); a plain background (Debian's is a WebP, which needs a loader); the screen never
    /// blanks while a test runs.
    static let settings = """
        [org/gnome/shell]
        enabled-extensions=['\(GnomeShellExtension.uuid)']
        welcome-dialog-last-shown-version='9999'

        [org/gnome/desktop/background]
        picture-options='none'

        [org/gnome/desktop/session]
        idle-delay=uint32 0
        """

    /// Stops the shell (and its notification service, which would otherwise hold the name for a
    /// shell that is gone) and the system bus, and removes the folder.
    public func stop() async {
        shell.terminate()
        if await shell.waitForExit(timeout: .seconds(10)) == nil { shell.kill() }
        if let notificationService { kill(notificationService, SIGTERM) }
        connection.close()
        // The system bus itself stops when the stage is released (PrivateBus, on a thread of its own).
        system.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    deinit {
        shell.kill()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The pid of the notification service the bus started for this shell, asked of the bus.
    private func notificationServicePID() async throws -> pid_t? {
        guard let owner = try await connection.nameOwner(Self.notificationServiceName) else { return nil }
        let reply = try await connection.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                                              member: "GetConnectionUnixProcessID", [.string(owner)])
        guard case .uint32(let pid)? = reply.first else { return nil }
        return pid_t(pid)
    }

    // MARK: Asking the shell

    /// Runs `js` in the shell (`org.gnome.Shell.Eval`) and returns its value as JSON text; throws
    /// with the shell's message when it throws.
    @discardableResult
    public func eval(_ js: String) async throws -> String {
        let reply = try await connection.call(destination: "org.gnome.Shell", path: "/org/gnome/Shell", interface: "org.gnome.Shell",
                                              member: "Eval", [.string(js)], timeout: Deadlines.stretched(.seconds(30)))
        guard reply.count == 2, case .bool(let success) = reply[0], case .string(let result) = reply[1] else {
            throw TestSupportError("Eval answered \(reply)")
        }
        guard success else { throw TestSupportError("Eval of \(js) failed: \(result)") }
        return result
    }

    /// Runs `js` in the shell and decodes its value.
    public func eval<T: Decodable>(_ js: String, as type: T.Type) async throws -> T {
        let json = try await eval(js)
        do {
            return try JSONDecoder().decode(T.self, from: Data((json.isEmpty ? "null" : json).utf8))
        } catch {
            throw TestSupportError("Eval of \(js) gave \(json), not a \(T.self): \(error)")
        }
    }

    /// Every notification the message tray holds (the shell's `Main.messageTray` sources).
    public func notifications() async throws -> [Notification] {
        try await eval("global.monkeycallStage.notifications()", as: [Notification].self)
    }

    /// The banner on screen now, as drawn; nil when none is.
    public func banner() async throws -> Banner? {
        try await eval("global.monkeycallStage.banner()", as: Banner?.self)
    }

    /// The next settled banner (shown, no longer moving) that satisfies `predicate`.
    @discardableResult
    public func waitForBanner(timeout: Duration = .seconds(20), where predicate: @escaping (Banner) -> Bool = { _ in true }) async throws -> Banner {
        let banner = try await poll("a banner", timeout: timeout, { try await self.banner() }) { banner in
            banner.map { $0.settled && predicate($0) } ?? false
        }
        return banner!
    }

    /// Waits until the message tray holds a notification that satisfies `predicate`.
    @discardableResult
    public func waitForNotification(timeout: Duration = .seconds(20), where predicate: @escaping (Notification) -> Bool) async throws -> Notification {
        try await poll("a notification", timeout: timeout, { try await self.notifications() }) { $0.contains(where: predicate) }
            .first(where: predicate)!
    }

    /// Clicks the banner's button labelled `actionLabel` as a user does: a virtual pointer moves
    /// onto it (first onto the banner, which shows its buttons only when expanded), and once the
    /// shell has the button under the pointer and hovered, the primary button is pressed and released.
    public func click(actionLabel label: String, timeout: Duration = .seconds(20)) async throws {
        var banner = try await waitForBanner(timeout: timeout)
        if !banner.expanded {
            try await movePointer(to: banner.frame.center)
            banner = try await waitForBanner(timeout: timeout) { $0.expanded }
        }
        guard let button = banner.buttons.first(where: { $0.label == label }) else {
            throw TestSupportError("the banner has no \(label) button: \(banner)")
        }
        try await click(at: button.center, "the \(label) button", timeout: timeout) { $0.button == label && $0.hover }
    }

    /// Clicks the banner's body (on its title), which runs the notification's default action.
    public func clickBanner(timeout: Duration = .seconds(20)) async throws {
        let banner = try await waitForBanner(timeout: timeout)
        try await click(at: banner.titleFrame.center, "the banner", timeout: timeout) { $0.banner && $0.hover }
    }

    /// One provider's results in the overview's search.
    public struct SearchResults: Decodable, Sendable, CustomStringConvertible {
        public struct Result: Decodable, Sendable {
            public let name: String
            public let description: String
            public let x, y, width, height: Double
            public var center: (x: Double, y: Double) { (x + width / 2, y + height / 2) }
        }
        /// The app the results show under (nil for the shell's own providers).
        public let app: String?
        public let results: [Result]
        public var description: String { "\(app ?? "(shell)"): \(results.map { "\($0.name) — \($0.description.debugDescription)" })" }
    }

    /// Opens the overview and types `text` into its search, as a user does after Super.
    public func search(_ text: String) async throws {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        try await eval("global.monkeycallStage.search('\(escaped)')")
    }

    /// Waits until the overview's search shows results that satisfy `predicate`.
    @discardableResult
    public func waitForSearchResults(timeout: Duration = .seconds(20), where predicate: @escaping ([SearchResults]) -> Bool) async throws -> [SearchResults] {
        try await poll("search results", timeout: timeout, { try await self.eval("global.monkeycallStage.searchResults()", as: [SearchResults].self) },
                       until: predicate)
    }

    /// Clicks the search result named `name` with the pointer.
    public func clickSearchResult(named name: String, timeout: Duration = .seconds(20)) async throws {
        let shown = try await waitForSearchResults(timeout: timeout) { $0.contains { $0.results.contains { $0.name == name && $0.width > 0 } } }
        guard let result = shown.flatMap(\.results).first(where: { $0.name == name }) else { throw TestSupportError("no result \(name)") }
        try await click(at: result.center, "the result \(name)", timeout: timeout) { $0.hover }
    }

    /// Moves the pointer to `point`, waits until the shell has `target` under it, and clicks.
    private func click(at point: (x: Double, y: Double), _ what: String, timeout: Duration, target: @escaping (Pointer) -> Bool) async throws {
        try await movePointer(to: point)
        _ = try await poll("the pointer on \(what)", timeout: timeout, { try await self.pointer() }, until: target)
        try await eval("global.monkeycallStage.click()")
    }

    /// Moves the stage's virtual pointer to `point` (stage coordinates: the 1280x800 monitor).
    public func movePointer(to point: (x: Double, y: Double)) async throws {
        try await eval("global.monkeycallStage.movePointer(\(point.x), \(point.y))")
    }

    /// Where the pointer is, and the button under it.
    public func pointer() async throws -> Pointer {
        try await eval("global.monkeycallStage.pointer()", as: Pointer.self)
    }

    /// Locks the screen (what Super+L does, without its animation) and returns the lock screen
    /// once the session is in the `unlock-dialog` mode.
    @discardableResult
    public func lock(timeout: Duration = .seconds(20)) async throws -> LockScreen {
        try await eval("global.monkeycallStage.lock()")
        return try await waitForLockScreen(timeout: timeout) { $0.locked && $0.mode == "unlock-dialog" }
    }

    /// Unlocks as `loginctl unlock-session` does (logind's session emits Unlock), and returns once
    /// the session is back in the `user` mode.
    public func unlock(timeout: Duration = .seconds(20)) async throws {
        try await system.unlockSession()
        _ = try await waitForLockScreen(timeout: timeout) { !$0.locked && $0.mode == "user" }
    }

    /// The screen shield's state and what the lock screen lists.
    public func lockScreen() async throws -> LockScreen {
        try await eval("global.monkeycallStage.lockScreen()", as: LockScreen.self)
    }

    @discardableResult
    public func waitForLockScreen(timeout: Duration = .seconds(20), where predicate: @escaping (LockScreen) -> Bool) async throws -> LockScreen {
        try await poll("the lock screen", timeout: timeout, { try await self.lockScreen() }, until: predicate)
    }

    /// A PNG of the whole screen (1280x800), through the shell's own org.gnome.Shell.Screenshot.
    public func screenshot(to url: URL) async throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let reply = try await connection.call(destination: "org.gnome.Shell.Screenshot", path: "/org/gnome/Shell/Screenshot",
                                              interface: "org.gnome.Shell.Screenshot", member: "Screenshot",
                                              [.bool(false), .bool(false), .string(url.path)], timeout: Deadlines.stretched(.seconds(30)))
        guard reply.first == .bool(true) else { throw TestSupportError("Screenshot answered \(reply)") }
    }

    /// Reads the shell's state until `done` holds. The shell tells no event on the bus for what it
    /// draws (a banner sliding in, a button under the pointer): this is a poll, every 50 ms, bounded
    /// by the deadline, that fails at once if the shell exits.
    private func poll<T>(_ what: String, timeout: Duration, _ read: () async throws -> T, until done: (T) -> Bool) async throws -> T {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        var last = try await read()
        while !done(last) {
            guard shell.isRunning else { throw TestSupportError("gnome-shell exited waiting for \(what): \(shell.output.suffix(6000))") }
            guard ContinuousClock.now < deadline else { throw TestSupportError("\(what): not within \(timeout); last seen: \(last)") }
            try await Task.sleep(for: .milliseconds(50))  // a poll of the shell, bounded by the deadline
            last = try await read()
        }
        return last
    }
}

// MARK: What the shell shows

extension GnomeShellStage {
    /// A notification in the message tray: its source's title (the app's name, or what the sender
    /// gave as app_name), title, body as sent, button labels, urgency ("low", "normal", "high",
    /// "critical"), whether it is resident, and its icon (a GIcon's string).
    public struct Notification: Decodable, Sendable, Equatable, CustomStringConvertible {
        public let source: String
        public let title: String
        public let body: String
        public let actions: [String]
        public let urgency: String
        public let resident: Bool
        public let icon: String?
        /// The sound the shell plays each time it shows this notification: a theme name or a path.
        public let sound: String?

        public var description: String {
            "[\(source)] \(title) — \(body.debugDescription) \(actions) \(urgency)\(resident ? " resident" : "") icon \(icon ?? "none") sound \(sound ?? "none")"
        }
    }

    /// A rectangle on the screen, in stage coordinates.
    public struct Frame: Decodable, Sendable, Equatable {
        public let x, y, width, height: Double
        public var center: (x: Double, y: Double) { (x + width / 2, y + height / 2) }
    }

    public struct Button: Decodable, Sendable, Equatable {
        public let label: String
        public let x, y, width, height: Double
        public var center: (x: Double, y: Double) { (x + width / 2, y + height / 2) }
    }

    /// The banner on screen, as drawn: title, body (whole when expanded; else on one line), icon,
    /// urgency, buttons (shown only when expanded), whether it is expanded and settled (shown, no
    /// longer moving), and where it is.
    public struct Banner: Decodable, Sendable, Equatable, CustomStringConvertible {
        public let title: String
        public let body: String
        public let icon: String?
        public let urgency: String
        public let expanded: Bool
        public let settled: Bool
        public let buttons: [Button]
        public let frame: Frame
        public let titleFrame: Frame

        public var buttonLabels: [String] { buttons.map(\.label) }
        public var description: String {
            "\(title) — \(body.debugDescription) \(buttonLabels) \(urgency) icon \(icon ?? "none")\(expanded ? " expanded" : "")\(settled ? " settled" : "")"
        }
    }

    /// Where the pointer is and what is under it: a button's label, whether that button shows
    /// the hover, whether it is the banner itself (its body).
    public struct Pointer: Decodable, Sendable {
        public let x, y: Double
        public let button: String?
        public let hover: Bool
        public let banner: Bool
    }

    /// The screen shield: locked or not, the session mode ("user", "unlock-dialog"), and the
    /// lock screen's list (one entry per app).
    public struct LockScreen: Decodable, Sendable, CustomStringConvertible {
        public struct Entry: Decodable, Sendable, Equatable {
            /// The texts shown: the app's name (and a count), or with details the titles and bodies.
            public let labels: [String]
            public let icon: String?
            /// Drawn as critical (a notification of urgency 2 among the app's).
            public let critical: Bool
        }

        public let locked: Bool
        public let mode: String
        public let entries: [Entry]

        public var description: String { "\(locked ? "locked" : "unlocked") (\(mode)) \(entries)" }
    }
}
