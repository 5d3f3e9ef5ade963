import Foundation

/// One evolution-data-server for the whole test run (AddressBookTests and ServiceTests): a private
/// session bus whose service folder holds Debian's own
/// `org.gnome.evolution.dataserver.{Sources5,AddressBook10}.service`, so the registry and the
/// address-book factory are D-Bus activated as on a desktop, with HOME and the XDG folders in a
/// temporary folder. Made on first use; the bus and EDS go with the test process. EDS takes a
/// while to start on a loaded machine, so every test that needs one shares this one.
public final class SharedEDS: Sendable {
    public static let shared = Task { try await SharedEDS() }

    public let bus: PrivateBus
    /// The environment of a program that is a user of this desktop (the bus, HOME, the XDG folders, en_GB).
    public let environment: [String: String]
    private let gate = Gate()

    /// `Tests/AddressBookTests/Resources/eds-contacts.py`: edits the book through libebook (Python's gi), as GNOME Contacts does.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/AddressBookTests/Resources/eds-contacts.py").path
    /// The built-in "Personal" book, as the address book names its source.
    public static let builtinBook = "eds:system-address-book"

    private init() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-eds-\(UUID().uuidString.prefix(8))").path
        RemovedAtExit.add(home)
        var folders: [String: String] = [:]
        for (variable, name) in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                                 ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime")] {
            let path = home + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            folders[variable] = path
        }
        folders["GSETTINGS_BACKEND"] = "memory"
        folders["LANG"] = "en_GB.UTF-8"
        folders["LC_ALL"] = nil
        bus = try await PrivateBus.start(environment: folders) // dbus-daemon hands its environment to what it activates.
        RemovedAtExit.add(bus.directory.path)
        for name in ["org.gnome.evolution.dataserver.Sources5", "org.gnome.evolution.dataserver.AddressBook10"] {
            let file = "/usr/share/dbus-1/services/\(name).service"
            guard FileManager.default.fileExists(atPath: file) else {
                throw TestSupportError("\(file) is missing: scripts/deps installs evolution-data-server")
            }
            try FileManager.default.copyItem(atPath: file, toPath: bus.servicesDirectory.path + "/\(name).service")
        }
        environment = bus.environment.merging(folders) { $1 }
    }

    /// Runs eds-contacts.py (`add NAME TEL…` prints the new contact's UID; `edit UID NAME TEL…`, `remove UID`, `bulk COUNT FIRST`).
    @discardableResult
    public func contacts(_ arguments: String...) async throws -> String {
        let result = try await ChildProcess.run("/usr/bin/python3", [Self.script] + arguments, environment: environment, timeout: .seconds(120))
        guard result.status == 0 else { throw TestSupportError("eds-contacts.py \(arguments.joined(separator: " ")): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the registry and the address-book factory (SIGTERM), as a crash or a logout would.
    /// Call it only inside `exclusively`: other tests expect EDS to stay up while they run.
    /// The registry first: a factory that dies while the registry runs is a crash, and a reader
    /// opens its books again, which activates a new factory (and with it a new registry).
    public func stopEDS() async throws {
        for name in ["org.gnome.evolution.dataserver.Sources5", "org.gnome.evolution.dataserver.AddressBook10"] {
            let reply = try await ChildProcess.run("/usr/bin/dbus-send", [
                "--bus=" + bus.address, "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:" + name,
            ])
            guard reply.status == 0, let pid = reply.stdout.split(separator: " ").last.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else { continue }
            kill(pid, SIGTERM)
            // Gone from the bus before the next is stopped: a registry still shutting down when the
            // factory dies would have a reader open its books again.
            try await waitUntilUnowned(name)
        }
    }

    /// Waits until `name` has no owner on the bus (10 s at most).
    private func waitUntilUnowned(_ name: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let reply = try await ChildProcess.run("/usr/bin/dbus-send", [
                "--bus=" + bus.address, "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:" + name,
            ])
            if reply.stdout.contains("boolean false") { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestSupportError("\(name) still has an owner 10 s after SIGTERM")
    }

    /// Runs `body` while no other test holds EDS: one that stops and starts it must not meet
    /// another that activates it meanwhile (tests of different suites run at once).
    public func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await gate.enter()
        do {
            let result = try await body()
            await gate.leave()
            return result
        } catch {
            await gate.leave()
            throw error
        }
    }

    private actor Gate {
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard busy else { busy = true; return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
    }
}
