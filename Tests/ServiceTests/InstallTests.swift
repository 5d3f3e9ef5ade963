import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// scripts/install in a throw-away home: D-Bus activation starts monkeycalld,
/// `gio open` and `xdg-open` hand links to `monkeycall open`, uninstall cleans up.
@Suite("Install, links and D-Bus activation")
struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the search providers' files name the service's bus name and objects, and the Phone app")
    func searchProviderFiles() throws {
        func keys(_ file: String, group: String) throws -> [String: String] {
            let text = try String(contentsOf: Self.root.appendingPathComponent("desktop/\(file)"), encoding: .utf8)
            var inGroup = false, keys: [String: String] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                if line.hasPrefix("[") { inGroup = line == "[\(group)]"; continue }
                guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
                keys[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return keys
        }
        let gnome = try keys("org.monkeycall.Phone.search-provider.ini", group: "Shell Search Provider")
        #expect(gnome == ["DesktopId": PhoneApp.desktopID, "BusName": Telephony1.busName, "ObjectPath": Telephony1.searchPath.rawValue, "Version": "2"])
        let kde = try keys("monkeycall-krunner.desktop", group: "Desktop Entry")
        #expect(kde["X-Plasma-API"] == "DBus2" && kde["X-Plasma-DBusRunner-Service"] == Telephony1.busName
                && kde["X-Plasma-DBusRunner-Path"] == Telephony1.runnerPath.rawValue && kde["X-KDE-PluginInfo-Name"] == "monkeycall"
                && kde["Name"] != nil && kde["Icon"] != nil, "\(kde)")
    }

    @Test("the Phone app's metainfo shows pictures that the repository has, light and dark (found on main: a picture that never existed)")
    func metainfoScreenshots() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("desktop/org.monkeycall.Phone.metainfo.xml"), encoding: .utf8)
        let prefix = "https://raw.githubusercontent.com/monkeycall/monkeycall/main/"
        let images = text.split(separator: "\n").compactMap { line -> String? in
            guard let open = line.firstRange(of: "<image>"), let close = line.firstRange(of: "</image>") else { return nil }
            return String(line[open.upperBound..<close.lowerBound])
        }
        #expect(images.count == 2, "\(images)")
        for image in images {
            #expect(image.hasPrefix(prefix), "\(image)")
            let path = Self.root.appendingPathComponent(String(image.dropFirst(prefix.count))).path
            #expect(FileManager.default.fileExists(atPath: path), "\(image) is not in the repository")
        }
    }

    @Test("the URL-handler desktop file is valid and names the scheme; the unit is a D-Bus service")
    func desktopFiles() async throws {
        let desktop = Self.root.appendingPathComponent("desktop/monkeycall-url-handler.desktop").path
        let validation = try await ChildProcess.run("/usr/bin/desktop-file-validate", [desktop])
        #expect(validation.status == 0 && validation.stdout.isEmpty, "\(validation.stdout)\(validation.stderr)")
        let text = try String(contentsOfFile: desktop, encoding: .utf8)
        #expect(text.contains("MimeType=x-scheme-handler/monkeycall;") && text.contains("Exec=monkeycall open %u"))
        let unit = try String(contentsOf: Self.root.appendingPathComponent("desktop/monkeycalld.service"), encoding: .utf8)
        #expect(unit.contains("Type=dbus") && unit.contains("BusName=\(Telephony1.busName)"))
    }

    @Test("the unit restarts on failure and is confined; systemd-analyze verify --user finds nothing to say (found on main: no Restart=, no confinement)")
    func unitIsConfined() async throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("desktop/monkeycalld.service"), encoding: .utf8)
        let settings = Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: "=", maxSplits: 1)
            return parts.count == 2 && !line.hasPrefix("#") ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { $1 })
        for (key, value) in ["Restart": "on-failure", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "read-only",
                             "PrivateTmp": "yes", "RestrictAddressFamilies": "AF_UNIX", "SystemCallFilter": "@system-service", "UMask": "0077",
                             "ReadWritePaths": "%h/.local/share/monkeycall"] {
            #expect(settings[key] == value, "\(key)")
        }
        for key in ["MemoryMax", "TasksMax"] { #expect(settings[key] != nil, "\(key)") }

        // As installed (scripts/install fills in @bindir@), checked by systemd itself. A user
        // manager needs a runtime folder, not a running systemd: this works on a CI machine too.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-unit-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder.path
        environment["HOME"] = folder.path
        func verify(_ unit: String) async throws -> (status: Int32, stdout: String, stderr: String) {
            let path = folder.appendingPathComponent("monkeycalld.service")
            try unit.replacingOccurrences(of: "@bindir@", with: BuiltProducts.directory.path).write(to: path, atomically: true, encoding: .utf8)
            return try await ChildProcess.run("/usr/bin/systemd-analyze", ["verify", "--user", path.path], environment: environment)
        }
        let verified = try await verify(text)
        // systemd only warns of an unknown key or a bad value: any word from it is a failure.
        #expect(verified.status == 0 && verified.stdout.isEmpty && verified.stderr.isEmpty, "\(verified.stdout)\(verified.stderr)")
        let broken = try await verify(text.replacingOccurrences(of: "ProtectSystem=strict", with: "ProtectSystem=strictly"))
        #expect((broken.stdout + broken.stderr).contains("strictly"), "the check can fail: \(broken)")
    }

    @Test func linksStartCallsThroughAnActivatedDaemon() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-home-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appendingPathComponent("share"), config = home.appendingPathComponent("config"), prefix = home.appendingPathComponent("prefix")
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = data.path
        environment["XDG_CONFIG_HOME"] = config.path
        environment["XDG_DATA_DIRS"] = "/usr/share"
        let install = try await Self.install(["--from", BuiltProducts.directory.path, "--prefix", prefix.path], environment: environment)
        #expect(install.status == 0, "\(install.stderr)")
        // Not on PATH here: said, with what to do.
        #expect(install.stderr.contains("\(prefix.path)/bin is not on your PATH"), "\(install.stdout)\(install.stderr)")
        // The address-book helper as the package has it: C with Debian's flags, not SwiftPM's 5.7 MB build.
        let helperFile = try FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent("libexec/monkeycall/monkeycall-contacts").path)
        #expect(((helperFile[.size] as? NSNumber)?.intValue ?? .max) < 200_000, "\(helperFile[.size] ?? "no size")")
        // Completions and man pages, from the argument parsers.
        let bash = try String(contentsOf: data.appendingPathComponent("bash-completion/completions/monkeycall"), encoding: .utf8)
        #expect(bash.contains("_monkeycall()") && bash.contains("---completion"))
        for file in ["zsh/site-functions/_monkeycall", "fish/vendor_completions.d/monkeycall.fish"] {
            #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent(file).path), "\(file) missing")
        }
        for (program, section) in [("monkeycall", 1), ("monkeycalld", 8)] {
            let page = try String(contentsOf: prefix.appendingPathComponent("share/man/man\(section)/\(program).\(section)"), encoding: .utf8)
            #expect(page.contains(".Nm \(program)") && page.contains("Fl -address"), "\(program).\(section): \(page.prefix(200))")
        }
        // The translations, found beside the installed programs: the CLI's error in German.
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/locale/de/LC_MESSAGES/monkeycall.mo").path))
        var german = environment
        german["LANG"] = "de_DE.UTF-8"
        german["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + home.appendingPathComponent("no-bus").path
        let unreachable = try await ChildProcess.run(prefix.appendingPathComponent("bin/monkeycall").path, ["status"], environment: german)
        #expect(unreachable.status == 1 && unreachable.stderr.hasPrefix("Fehler: "), "\(unreachable.stderr)")
        // The desktop's search: KRunner reads the user's data folder; GNOME only system folders, which the installer says.
        let runner = try String(contentsOf: data.appendingPathComponent("krunner/dbusplugins/monkeycall.desktop"), encoding: .utf8)
        #expect(runner.contains("X-Plasma-DBusRunner-Path=\(Telephony1.runnerPath.rawValue)"))
        let provider = prefix.appendingPathComponent("share/gnome-shell/search-providers/org.monkeycall.Phone.search-provider.ini")
        #expect(try String(contentsOf: provider, encoding: .utf8).contains("ObjectPath=\(Telephony1.searchPath.rawValue)"))
        #expect(install.stdout.contains("install -D -m 644 '\(provider.path)' /usr/local/share/gnome-shell/search-providers/"), "\(install.stdout)")

        // A bus that knows the installed service file, and no daemon running yet.
        let bus = try await PrivateBus.start(servicesDirectory: data.appendingPathComponent("dbus-1/services"))
        defer { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let probe = try Connection(address: bus.address)
        #expect(try await probe.nameOwner(Telephony1.busName) == nil)

        // The app's first call starts monkeycalld.
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        #expect(try await probe.nameOwner(Telephony1.busName) != nil)
        // It reads GNOME's address books through the helper installed for it in libexec/monkeycall.
        let helper = prefix.appendingPathComponent("libexec/monkeycall/monkeycall-contacts").path
        #expect(FileManager.default.isExecutableFile(atPath: helper))
        let helperDeadline = ContinuousClock.now + .seconds(10)
        while !Self.runningExecutables().contains(helper), ContinuousClock.now < helperDeadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(Self.runningExecutables().contains(helper), "the installed daemon did not start \(helper)")

        // Links ask first: the user presses Call on the notification.
        let notifications = try await NotificationServer(address: bus.address)
        let gio = try await ChildProcess.run("/usr/bin/gio", ["open", "monkeycall://alice"], environment: environment)
        #expect(gio.status == 0, "\(gio.stderr)")
        try await notifications.confirmLink()
        let fromGio = try #require(await app.nextAction("start"))
        #expect(fromGio.args["Handle"] == .string("alice") && fromGio.args["HandleType"] == .string("generic"))

        // xdg-open consults x-scheme-handler only in a graphical session: it checks that a display is named.
        environment["DISPLAY"] = environment["DISPLAY"] ?? ":99"
        let xdg = try await ChildProcess.run("/usr/bin/xdg-open", ["monkeycall:+1%20555%20123"], environment: environment)
        #expect(xdg.status == 0, "\(xdg.stderr)")
        try await notifications.confirmLink()
        let fromXdg = try #require(await app.nextAction("start"))
        #expect(fromXdg.args["Handle"] == .string("+1 555 123") && fromXdg.args["HandleType"] == .string("phone-number"))

        // With no app for the link: a clear error and a non-zero status.
        try await app.call("Invalidate")
        let orphan = try await ChildProcess.run(prefix.appendingPathComponent("bin/monkeycall").path, ["open", "monkeycall:bob"], environment: environment)
        #expect(orphan.status != 0)
        #expect(orphan.stderr.contains("no app for monkeycall: links"), "\(orphan.stderr)")

        // The user's data (here a stand-in) stays, and the uninstaller says where and how to remove it.
        let userData = data.appendingPathComponent("monkeycall")
        try FileManager.default.createDirectory(at: userData, withIntermediateDirectories: true)
        #expect(try await probe.nameOwner(Telephony1.busName) != nil)
        let uninstall = try await Self.install(["--prefix", prefix.path, "--uninstall"], environment: environment)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        // The running daemon is stopped, not left running from deleted files.
        #expect(uninstall.stdout.contains("stopped monkeycalld"), "\(uninstall.stdout)")
        #expect(try await probe.nameOwner(Telephony1.busName) == nil)
        #expect(uninstall.stdout.contains("stay in \(userData.path)") && uninstall.stdout.contains("rm -rf '\(userData.path)'"), "\(uninstall.stdout)")
        try FileManager.default.removeItem(at: userData)
        let left = FileManager.default.enumerator(atPath: home.path)?.allObjects.compactMap { $0 as? String } ?? []
        #expect(left.filter { !["share", "config", "prefix"].contains($0) }.isEmpty, "left behind: \(left)")
    }

    @Test("links: MonkeyCall becomes the default only where there was none; --default-for takes one over; --uninstall gives it back")
    func linkDefaults() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-home-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appendingPathComponent("share"), prefix = home.appendingPathComponent("prefix")
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = data.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
        // Only the test home's applications: the machine's own handlers do not count.
        environment["XDG_DATA_DIRS"] = home.appendingPathComponent("none").path
        let query = { (scheme: String) async throws -> String in
            try await ChildProcess.run("/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/\(scheme)"], environment: environment)
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // Another phone app already takes tel: links.
        try writeDesktopFile("other-phone.desktop", in: data.appendingPathComponent("applications"), name: "Other Phone", exec: "true %u",
                             more: "MimeType=x-scheme-handler/tel;\n")
        _ = try await ChildProcess.run("/usr/bin/xdg-mime", ["default", "other-phone.desktop", "x-scheme-handler/tel"], environment: environment)
        #expect(try await query("tel") == "other-phone.desktop")

        let install = try await Self.install(["--from", BuiltProducts.directory.path, "--prefix", prefix.path], environment: environment)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stdout.contains("MonkeyCall opens these links: monkeycall: sip: sips: callto:"), "\(install.stdout)")
        #expect(install.stdout.contains("tel: stays with other-phone.desktop (scripts/install --default-for tel to take it)"), "\(install.stdout)")
        for scheme in ["monkeycall", "sip", "sips", "callto"] { #expect(try await query(scheme) == "monkeycall-url-handler.desktop", "\(scheme)") }
        #expect(try await query("tel") == "other-phone.desktop")

        let takeOver = try await Self.install(["--from", BuiltProducts.directory.path, "--prefix", prefix.path, "--default-for", "tel"],
                                              environment: environment)
        #expect(takeOver.status == 0, "\(takeOver.stderr)")
        #expect(takeOver.stdout.contains("tel: (from other-phone.desktop)"), "\(takeOver.stdout)")
        #expect(try await query("tel") == "monkeycall-url-handler.desktop")

        let uninstall = try await Self.install(["--prefix", prefix.path, "--uninstall"], environment: environment)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(uninstall.stdout.contains("tel: links go to other-phone.desktop again"), "\(uninstall.stdout)")
        #expect(try await query("tel") == "other-phone.desktop")
        #expect(try await query("sip") == "")
    }

    /// Runs scripts/install. Its deadline is for a hang, not for speed: the script starts some 300
    /// processes (xdg-mime, a shell script, ten times, each with its greps and xprops), 2.5 s on an
    /// idle 2-core machine, and it once took over 30 s (ChildProcess.run's default) when this suite
    /// ran it beside every other suite's start (CI at f471311).
    static func install(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run(root.appendingPathComponent("scripts/install").path, arguments, environment: environment, timeout: .seconds(180))
    }

    /// What every process of this user runs (`/proc/PID/exe`).
    static func runningExecutables() -> Set<String> {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return Set(pids.filter { $0.allSatisfy(\.isNumber) }.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\($0)/exe") })
    }
}
