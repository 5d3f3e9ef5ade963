import DBus
import Foundation

/// A real GNOME Shell, headless (`gnome-shell --headless --virtual-monitor 1280x800 --wayland
/// --no-x11`), as the notification server of a test's session bus: what a GNOME user sees of a
/// call, read back from the shell itself (`Main.messageTray`), clicked with real pointer events,
/// locked and unlocked, and photographed. Two shells (`Shell`): the machine's GNOME Shell 43
/// (Debian 12), and Debian 13's GNOME Shell 48, run inside the root that `scripts/debian-root
/// trixie desktop` unpacks (`DebianStage.trixieDesktop`).
///
/// The shell runs in a temporary home of its own (settings in a keyfile there, never the user's
/// dconf), with a private system bus (`GnomeShellSystemBus`: logind and GDM stand-ins, without
/// which it dies at start or offers no lock screen) and a test-only extension
/// (`GnomeShellExtension`) that opens `org.gnome.Shell.Eval` and `Screenshot` to the tests. Its
/// notification service (`org.gnome.Shell.Notifications`, the gjs program that owns
/// `org.freedesktop.Notifications` and hands each call to the shell) is D-Bus activated on the
/// test's bus, as in a session: its service file goes into the bus's services folder.
///
/// GNOME Shell 48 runs in a PID and mount namespace of its own (`DebianStage.spawn`): the root's
/// programs and libraries, the machine's /dev, /sys and /tmp bound in, so that the buses' sockets
/// and the stage's folder (all under the temporary folder) have the same paths inside and out. Its
/// notification service, activated by the test's bus on the machine's side, joins the shell's
/// namespace (`nsenter`): it ends with the shell.
///
/// Children die with the test process (`ChildProcess`; for 48 the namespace's first process is the
/// shell, and everything in the namespace ends with it); the activated notification service dies
/// with its bus (43) or its namespace (48), or on `stop()`. The stage reads shell internals that
/// change between versions: it runs only GNOME Shell 43 and 48, and `start` throws `Unavailable`
/// where the shell asked for cannot run, as where gnome-shell, gjs or python3-dbusmock is not
/// installed, or Debian 13's root was not made.
public final class GnomeShellStage: @unchecked Sendable {
    /// The path of gnome-shell, on the machine and in Debian 13's root.
    public static let executable = "/usr/bin/gnome-shell"
    static let gjs = "/usr/bin/gjs"
    static let notificationServiceFile = "/usr/share/dbus-1/services/org.gnome.Shell.Notifications.service"
    public static let notificationServiceName = "org.gnome.Shell.Notifications"
    static let nsenter = "/usr/bin/nsenter"
    static let gdbus = "/usr/bin/gdbus"
    /// The machine's shell (`Shell.gnome43`).
    public static let supportedMajorVersion = 43

    /// Which GNOME Shell a stage runs. A test that takes it as an argument runs on both.
    public enum Shell: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The machine's own: Debian 12's GNOME Shell 43.
        case gnome43
        /// Debian 13's GNOME Shell 48, in the root `scripts/debian-root trixie desktop` unpacks
        /// (`MONKEYCALL_TRIXIE_STAGE`, else /var/tmp/monkeycall-stage-trixie-desktop).
        case gnome48

        public var majorVersion: Int {
            switch self {
            case .gnome43: 43
            case .gnome48: 48
            }
        }

        public var description: String {
            switch self {
            case .gnome43: "GNOME Shell 43 (Debian 12)"
            case .gnome48: "GNOME Shell 48 (Debian 13, in a chroot)"
            }
        }

        /// Why this shell cannot run here; nil when it can. Asked once per shell (it runs
        /// `gnome-shell --version`).
        public var unavailableReason: String? {
            switch self {
            case .gnome43: GnomeShellStage.gnome43UnavailableReason
            case .gnome48: GnomeShellStage.gnome48UnavailableReason
            }
        }

        public var isAvailable: Bool { unavailableReason == nil }
    }

    /// The stage cannot run on this machine (a package missing, another GNOME Shell version, no
    /// Debian 13 root): a test skips rather than fails.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Why the machine's GNOME Shell 43 cannot run here (`Shell.gnome43`); nil when it can.
    public static var unavailableReason: String? { Shell.gnome43.unavailableReason }

    public static var isAvailable: Bool { unavailableReason == nil }

    /// The machine's programs the stage runs for either shell: its system bus's logind.
    private static var systemBusUnavailableReason: String? {
        for (path, package) in [(GnomeShellSystemBus.python, "python3"), (GnomeShellSystemBus.logindTemplate, "python3-dbusmock")]
        where !FileManager.default.fileExists(atPath: path) {
            return "\(path) is missing (apt-get install \(package))"
        }
        return nil
    }

    static let gnome43UnavailableReason: String? = {
        for (path, package) in [(executable, "gnome-shell"), (gjs, "gjs"), (notificationServiceFile, "gnome-shell")]
        where !FileManager.default.fileExists(atPath: path) {
            return "\(path) is missing (apt-get install \(package))"
        }
        if let reason = systemBusUnavailableReason { return reason }
        guard let version = try? GnomeShellStage.installedVersion() else { return "gnome-shell --version did not answer" }
        guard version.hasPrefix("43.") else {
            return "GNOME Shell \(version) is installed; the stage reads the internals of 43 (and of Debian 13's 48, in its root)"
        }
        return nil
    }()

    static let gnome48UnavailableReason: String? = {
        let stage = DebianStage.trixieDesktop
        // /run/systemd/seats: the shell asks logind (the stage's) only where it exists.
        if let reason = stage.unavailableReason(needing: [executable, gjs, notificationServiceFile, "/run/systemd/seats"]) { return reason }
        for (path, package) in [(nsenter, "util-linux"), (gdbus, "libglib2.0-bin")] where access(path, X_OK) != 0 {
            return "\(path) is missing (apt-get install \(package))"
        }
        if let reason = systemBusUnavailableReason { return reason }
        guard let version = try? GnomeShellStage.installedVersion(root: stage.root) else {
            return "gnome-shell --version in \(stage.root) did not answer"
        }
        guard version.hasPrefix("48.") else {
            return "\(stage.root) has GNOME Shell \(version); the stage reads the internals of 48 there"
        }
        return nil
    }()

    /// "43.9" from "GNOME Shell 43.9": the machine's, or the one in the Debian root at `root`
    /// (run there with chroot alone: printing its version needs no namespace).
    static func installedVersion(root: String? = nil) throws -> String {
        let reader = FirstLineReader()
        let (program, arguments) = root.map { (DebianStage.chroot, [$0, "/usr/bin/env", "-i", executable, "--version"]) }
            ?? (executable, ["--version"])
        let child = try Spawned(program, arguments, environment: ProcessInfo.processInfo.environment,
                                onOutput: { isStderr, data in if !isStderr { reader.add(data) } }, onExit: { _ in reader.finish() })
        defer { child.signal(SIGKILL) }
        guard let line = reader.wait(seconds: 20), let version = line.split(separator: " ").last else {
            throw TestSupportError("gnome-shell --version printed nothing")
        }
        return String(version)
    }

    /// Which shell this is.
    public let shell: Shell
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
    /// gnome-shell itself (43), or `unshare`, whose child in a namespace of its own is gnome-shell (48).
    private let process: ChildProcess
    /// The bus's child, not ours: ended on `stop()` (43; 48's ends with the shell's namespace).
    private var notificationService: pid_t?
    /// Ours, on the session bus: Eval, Screenshot.
    private let connection: Connection

    private init(shell: Shell, bus: PrivateBus, folder: URL, system: GnomeShellSystemBus, process: ChildProcess, connection: Connection) {
        self.shell = shell
        self.bus = bus
        self.folder = folder
        self.system = system
        self.process = process
        self.connection = connection
    }

    /// What the shell printed, for messages on failure; for 48, its notification service's too.
    public var output: String {
        let service = (try? String(contentsOf: notificationServiceLog, encoding: .utf8)).map { "\n[notification service]\n" + $0 } ?? ""
        return process.output + service
    }

    /// Where 48's notification service writes what it prints (the bus that starts it keeps nothing).
    private var notificationServiceLog: URL { folder.appendingPathComponent("notification-service.log") }

    /// The shell's settings as another program of the session reads them (the keyfile in the
    /// stage's folder): for a daemon that follows GNOME's settings.
    public var settingsEnvironment: [String: String] {
        Self.environment(folder).filter { ["GSETTINGS_BACKEND", "XDG_CONFIG_HOME", "XDG_CURRENT_DESKTOP"].contains($0.key) }
    }

    /// `gsettings set SCHEMA KEY VALUE`, as the user would: the shell sees it at once (the
    /// machine's gsettings writes the keyfile either shell reads).
    public func set(_ schema: String, _ key: String, _ value: String) async throws {
        let result = try await ChildProcess.run("/usr/bin/gsettings", ["set", schema, key, value],
                                                environment: ProcessInfo.processInfo.environment.merging(settingsEnvironment) { $1 })
        guard result.status == 0 else { throw TestSupportError("gsettings set \(schema) \(key) \(value): \(result.stderr)") }
    }

    // MARK: Starting and stopping

    /// Starts `shell` as the notification server of `bus`, and returns once the shell is ready
    /// and `org.freedesktop.Notifications` is its. `environment`: added to the shell's (a
    /// `SoundServer`'s, to hear the sounds the shell plays). Throws `Unavailable` where the stage
    /// cannot run. One stage per bus.
    /// `installing`: files put in the stage's `share` data folder before the shell starts, by path
    /// under it (a desktop file, a search provider's `.ini`), as a package installs them.
    /// `programs`: executables the shell must find on its PATH (a desktop file's `Exec`), by path:
    /// linked into the stage's `bin`, first on the shell's PATH (48 sees no other folder of the
    /// machine's but the temporary one).
    public static func start(_ shell: Shell = .gnome43, bus: PrivateBus, environment extra: [String: String] = [:],
                             installing files: [String: String] = [:], programs: [String] = []) async throws -> GnomeShellStage {
        if let reason = shell.unavailableReason { throw Unavailable(description: reason) }
        let began = ContinuousClock.now
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-gnome-\(UUID().uuidString.prefix(8))")
        let system: GnomeShellSystemBus
        let environment: [String: String]
        do {
            try prepare(folder, major: shell.majorVersion, programs: programs)
            for (path, contents) in files {
                let file = folder.appendingPathComponent("share").appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(contents.utf8).write(to: file)
            }
            system = try await GnomeShellSystemBus.start(displayManagerVersion: "\(shell.majorVersion).0")
            environment = shellEnvironment(shell, folder: folder, bus: bus, system: system, extra: extra)
            try installNotificationService(shell, folder: folder, bus: bus, environment: environment)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }

        let spawned = ContinuousClock.now
        let process: ChildProcess
        let connection: Connection
        let arguments = ["--headless", "--virtual-monitor", "1280x800", "--wayland", "--no-x11"]
        do {
            switch shell {
            case .gnome43: process = try ChildProcess(executable, arguments, environment: environment)
            case .gnome48:
                // 48's surfaceless renderer has no GPU, and 48 turns animations off where rendering
                // is not hardware accelerated: a desktop with a GPU animates. Without animations,
                // a banner's hiding ends within the tray's update that began it, whose guard then
                // drops the update that would show the next banner: a critical call queued behind
                // another banner stays unseen until something else stirs the tray (seen here: the
                // second call's banner never came).
                process = try DebianStage.trixieDesktop.spawn(executable, arguments + ["--force-animations"], environment: environment)
            }
            // A shell started already dies with its ChildProcess, released here.
            connection = try Connection(address: bus.address)
        } catch {
            system.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        let stage = GnomeShellStage(shell: shell, bus: bus, folder: folder, system: system, process: process, connection: connection)
        do {
            // Cold (first start after boot, files not cached) it takes about 6 s alone; under the
            // whole suite's load on 2 cores, much longer.
            guard await process.waitForOutput(containing: GnomeShellExtension.readyLine, timeout: .seconds(120)) else {
                throw TestSupportError("\(shell) did not get ready (\(process.isRunning ? "still running" : "exited")): \(stage.output.suffix(6000))")
            }
            do {
                try await connection.waitForName(NotificationServer.name, startedBy: process, timeout: .seconds(60))
            } catch {
                throw TestSupportError("\(error)\(shell == .gnome48 ? "; \(stage.output.suffix(3000))" : "")")
            }
            stage.shellStartTime = ContinuousClock.now - spawned
            if shell == .gnome43 { stage.notificationService = try await stage.notificationServicePID() }
            // Readiness as the shell's own Eval tells it: start-up over, no notification left.
            let ready = try await stage.eval("Main.layoutManager._startingUp === false && Main.messageTray.getSources().length === 0")
            guard ready == "true" else { throw TestSupportError("\(shell) is not ready after start: Eval says \(ready)") }
        } catch {
            await stage.stop()
            throw error
        }
        stage.stageStartTime = ContinuousClock.now - began
        return stage
    }

    /// Home, settings, runtime folder, the programs' `bin` and the extension in `folder`.
    private static func prepare(_ folder: URL, major: Int, programs: [String]) throws {
        let files = FileManager.default
        for name in ["home", "config/glib-2.0/settings", "data", "cache", "state", "share/applications", "bin"] {
            try files.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        // The Wayland socket goes there; GLib wants it private.
        try files.createDirectory(at: folder.appendingPathComponent("runtime"), withIntermediateDirectories: true,
                                  attributes: [.posixPermissions: 0o700])
        try writeClosingOnExec(settings, to: folder.appendingPathComponent("config/glib-2.0/settings/keyfile"))
        try GnomeShellExtension.install(dataDirectory: folder.appendingPathComponent("share"), major: major)
        for program in programs {
            let linked = folder.appendingPathComponent("bin").appendingPathComponent(URL(fileURLWithPath: program).lastPathComponent)
            // A hard link: the program itself, at a path 48 sees too (a symbolic link would point
            // outside its root). A copy where the temporary folder is on another file system.
            if link(program, linked.path) != 0 { try files.copyItem(atPath: program, toPath: linked.path) }
        }
    }

    /// The shell's environment, and its notification service's. 43: the test process's, with the
    /// test's bus. 48: nothing of the machine's (its programs are the root's), only the buses and
    /// the sound server. Then the stage's session and the system bus; `extra` last.
    static func shellEnvironment(_ shell: Shell, folder: URL, bus: PrivateBus, system: GnomeShellSystemBus,
                                 extra: [String: String]) -> [String: String] {
        let bin = folder.appendingPathComponent("bin").path
        var environment: [String: String]
        switch shell {
        case .gnome43:
            environment = bus.environment
            for name in ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "LANGUAGE", "LANG"] { environment[name] = nil }
            environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        case .gnome48:
            environment = bus.environment.filter { ["DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER"].contains($0.key) }
            environment["PATH"] = bin + ":/usr/bin:/bin"
        }
        environment.merge(Self.environment(folder)) { $1 }
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = system.address
        environment.merge(extra) { $1 }
        return environment
    }

    /// The notification service's file in the bus's services folder. 43: the machine's own. 48:
    /// one that runs the root's service (its own service file's `Exec`) inside the shell's
    /// namespace, through a script in the stage's folder (`notification-service`).
    ///
    /// The script finds the namespace through the bus: the shell owns `org.gnome.Shell` (from its
    /// C start-up, before its JavaScript asks for the notification service), and the bus, on the
    /// machine's side, gives its pid as the machine sees it, the one `nsenter` needs. The service
    /// gets the shell's environment; what it prints goes to `notification-service.log`.
    private static func installNotificationService(_ shell: Shell, folder: URL, bus: PrivateBus, environment: [String: String]) throws {
        let service = bus.servicesDirectory.appendingPathComponent("\(notificationServiceName).service")
        switch shell {
        case .gnome43:
            try writeClosingOnExec(try String(contentsOfFile: notificationServiceFile, encoding: .utf8), to: service)
        case .gnome48:
            let root = DebianStage.trixieDesktop.root
            let declared = try String(contentsOfFile: root + notificationServiceFile, encoding: .utf8)
            guard let exec = declared.split(separator: "\n").first(where: { $0.hasPrefix("Exec=") })?.dropFirst("Exec=".count) else {
                throw TestSupportError("\(root)\(notificationServiceFile) has no Exec")
            }
            let command = exec.split(separator: " ").map(String.init)
            let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let quoted = (["/usr/bin/env", "-i"] + assignments + command).map(DebianStage.quoted).joined(separator: " ")
            let wrapper = folder.appendingPathComponent("notification-service")
            let log = folder.appendingPathComponent("notification-service.log")
            try writeExecutable("""
                #!/bin/sh
                # GNOME Shell 48's notification service, D-Bus activated by a test's bus: run in the
                # namespace of the shell that owns org.gnome.Shell on that bus (GnomeShellStage).
                exec >>\(DebianStage.quoted(log.path)) 2>&1
                set -e
                reply="$(\(gdbus) call --address \(DebianStage.quoted(bus.address)) --dest org.freedesktop.DBus \\
                    --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.GetConnectionUnixProcessID org.gnome.Shell)"
                pid="${reply#"(uint32 "}"; pid="${pid%",)"}"
                case "$pid" in ''|*[!0-9]*) echo "no pid for org.gnome.Shell: $reply"; exit 1;; esac
                exec \(nsenter) -t "$pid" -m -p -r -w \(quoted)

                """, to: wrapper)
            try writeClosingOnExec("""
                [D-BUS Service]
                Name=\(notificationServiceName)
                Exec=\(wrapper.path)

                """, to: service)
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
    /// shell that is gone) and the system bus, and removes the folder. 48: the namespace is killed
    /// (unshare ignores SIGTERM), which ends the shell and the service in it.
    public func stop() async {
        switch shell {
        case .gnome43:
            process.terminate()
            if await process.waitForExit(timeout: .seconds(10)) == nil { process.kill() }
            if let notificationService { kill(notificationService, SIGTERM) }
        case .gnome48:
            process.kill()
            _ = await process.waitForExit(timeout: .seconds(10))
        }
        connection.close()
        // The system bus itself stops when the stage is released (PrivateBus, on a thread of its own).
        system.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    deinit {
        process.kill()
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
        do {
            let banner = try await poll("a banner", timeout: timeout, { try await self.banner() }) { banner in
                banner.map { $0.settled && predicate($0) } ?? false
            }
            return banner!
        } catch {
            // What the tray holds and queues tells a banner never shown from a notification never posted.
            let held = (try? await notifications()).map { "\($0)" } ?? "(unread)"
            let queued = (try? await eval("[Main.messageTray._notificationState, Main.messageTray._notificationQueue.map(n => n.title)]")) ?? "(unread)"
            throw TestSupportError("\(error); the tray holds \(held); its banner's state (MessageTray.State) and queue: \(queued)")
        }
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
    /// The shell writes it into the stage's folder (48, in its root, sees no other folder of the
    /// machine's but the temporary one), and it is moved to `url` from there.
    public func screenshot(to url: URL) async throws {
        let files = FileManager.default
        try files.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let shot = folder.appendingPathComponent("screenshot-\(UUID().uuidString.prefix(8)).png")
        let reply = try await connection.call(destination: "org.gnome.Shell.Screenshot", path: "/org/gnome/Shell/Screenshot",
                                              interface: "org.gnome.Shell.Screenshot", member: "Screenshot",
                                              [.bool(false), .bool(false), .string(shot.path)], timeout: Deadlines.stretched(.seconds(30)))
        guard reply.first == .bool(true) else { throw TestSupportError("Screenshot answered \(reply)") }
        if files.fileExists(atPath: url.path) { try files.removeItem(at: url) }
        try files.moveItem(at: shot, to: url)
    }

    /// Reads the shell's state until `done` holds. The shell tells no event on the bus for what it
    /// draws (a banner sliding in, a button under the pointer): this is a poll, every 50 ms, bounded
    /// by the deadline, that fails at once if the shell exits.
    private func poll<T>(_ what: String, timeout: Duration, _ read: () async throws -> T, until done: (T) -> Bool) async throws -> T {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        var last = try await read()
        while !done(last) {
            guard process.isRunning else { throw TestSupportError("\(shell) exited waiting for \(what): \(output.suffix(6000))") }
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

    /// The banner on screen, as drawn: title, body (43: whole when expanded, else on one line; 48:
    /// always one line of text, line breaks drawn as spaces), icon, urgency, buttons (shown only
    /// when expanded), whether it is expanded and settled (shown, no longer moving), and where it is.
    public struct Banner: Decodable, Sendable, Equatable, CustomStringConvertible {
        public let title: String
        public let body: String
        public let icon: String?
        /// The header's source name and icon: 46 and later head a banner with them (43 draws no
        /// header: nil).
        public let source: String?
        public let sourceIcon: String?
        public let urgency: String
        public let expanded: Bool
        public let settled: Bool
        public let buttons: [Button]
        public let frame: Frame
        public let titleFrame: Frame

        public var buttonLabels: [String] { buttons.map(\.label) }
        public var description: String {
            "\(source.map { "[\($0), icon \(sourceIcon ?? "none")] " } ?? "")\(title) — \(body.debugDescription) \(buttonLabels) \(urgency) icon \(icon ?? "none")\(expanded ? " expanded" : "")\(settled ? " settled" : "")"
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
