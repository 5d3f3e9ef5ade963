import DBusTestSupport
import Foundation
import Testing
@testable import AddressBook

/// One evolution-data-server for the whole suite: a private session bus whose service folder
/// holds Debian's own `org.gnome.evolution.dataserver.{Sources5,AddressBook10}.service`, so the
/// registry and the address-book factory are D-Bus activated as on a desktop, with HOME and the
/// XDG folders in a temporary folder. Made on first use; the bus and EDS go with the test process.
final class SharedEDS: Sendable {
    static let shared = Task { try await SharedEDS() }

    let bus: PrivateBus
    let environment: [String: String]
    private let home: TemporaryFolder

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/eds-contacts.py").path
    static let builtinBook = "eds:system-address-book"

    private init() async throws {
        home = TemporaryFolder()
        var folders: [String: String] = [:]
        for (variable, name) in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                                 ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime")] {
            let path = home.path + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            folders[variable] = path
        }
        folders["GSETTINGS_BACKEND"] = "memory"
        folders["LANG"] = "en_GB.UTF-8"
        folders["LC_ALL"] = nil
        bus = try await PrivateBus.start(environment: folders) // dbus-daemon hands its environment to what it activates.
        for name in ["org.gnome.evolution.dataserver.Sources5", "org.gnome.evolution.dataserver.AddressBook10"] {
            let file = "/usr/share/dbus-1/services/\(name).service"
            guard FileManager.default.fileExists(atPath: file) else {
                throw TestSupportError("\(file) is missing: scripts/deps installs evolution-data-server")
            }
            try FileManager.default.copyItem(atPath: file, toPath: bus.servicesDirectory.path + "/\(name).service")
        }
        environment = bus.environment.merging(folders) { $1 }
    }

    /// Runs Resources/eds-contacts.py (libebook through Python's gi, as GNOME Contacts edits a book).
    @discardableResult
    func contacts(_ arguments: String...) async throws -> String {
        let result = try await ChildProcess.run("/usr/bin/python3", [Self.script] + arguments, environment: environment, timeout: .seconds(120))
        guard result.status == 0 else { throw TestSupportError("eds-contacts.py \(arguments.joined(separator: " ")): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the registry and the address-book factory (SIGTERM), as a crash or a logout would.
    func stopEDS() async throws {
        for name in ["org.gnome.evolution.dataserver.AddressBook10", "org.gnome.evolution.dataserver.Sources5"] {
            let reply = try await ChildProcess.run("/usr/bin/dbus-send", [
                "--bus=" + bus.address, "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:" + name,
            ])
            guard reply.status == 0, let pid = reply.stdout.split(separator: " ").last.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else { continue }
            kill(pid, SIGTERM)
        }
    }

    func book() throws -> BookUnderTest {
        let helper = BuiltProducts.path("monkeycall-contacts")
        guard FileManager.default.isExecutableFile(atPath: helper) else {
            throw TestSupportError("\(helper) is not built: swift build --product monkeycall-contacts")
        }
        return BookUnderTest(.init(folders: [], edsHelper: helper, helperEnvironment: environment, numbering: ContactNumbering(region: "GB")))
    }
}

@Suite(.serialized) struct AddressBookEDSTests {
    @Test("GNOME's address book: read at start, then a contact added, edited and removed through libebook while it runs")
    func followed() async throws {
        let eds = try await SharedEDS.shared.value
        let alan = try await eds.contacts("add", "Alan Turing", "+44 20 7946 0100")
        let book = try eds.book()
        #expect(await book.waitForName("+44 20 7946 0100", "Alan Turing"))

        let joan = try await eds.contacts("add", "Joan Clarke", "020 7946 0101") // National: the locale's country.
        #expect(await book.waitForName("+44 20 7946 0101", "Joan Clarke"))

        try await eds.contacts("edit", alan, "Alan M. Turing", "+44 20 7946 0102")
        #expect(await book.waitForName("+44 20 7946 0102", "Alan M. Turing"))
        #expect(book.book.name(forHandle: "+44 20 7946 0100") == nil)

        try await eds.contacts("remove", joan)
        #expect(await book.waitForName("+44 20 7946 0101", nil))
        #expect(book.book.name(forHandle: "+44 20 7946 0102") == "Alan M. Turing")
        try await eds.contacts("remove", alan)
    }

    @Test("EDS stopped: its contacts go; EDS started again (also after an address book that started without it): they come back")
    func stoppedAndStartedAgain() async throws {
        let eds = try await SharedEDS.shared.value
        try await eds.contacts("add", "Tommy Flowers", "+44 20 7946 0103")
        let running = try eds.book()
        #expect(await running.waitForName("+44 20 7946 0103", "Tommy Flowers"))

        try await eds.stopEDS()
        #expect(await running.waitFor { $0 == .evolutionDataServer(running: false) } != nil)
        #expect(await running.waitForName("+44 20 7946 0103", nil))

        let startedWithoutEDS = try eds.book()
        #expect(await startedWithoutEDS.waitFor { $0 == .evolutionDataServer(running: false) } != nil)
        // Editing the book activates EDS again, as GNOME Contacts or the shell would.
        try await eds.contacts("add", "Max Newman", "+44 20 7946 0104")
        for book in [running, startedWithoutEDS] {
            #expect(await book.waitForName("+44 20 7946 0104", "Max Newman", timeout: .seconds(60)))
            #expect(book.book.name(forHandle: "+44 20 7946 0103") == "Tommy Flowers")
        }
    }

    @Test("bench: 10,000 contacts in GNOME's address book indexed at start")
    func indexTenThousand() async throws {
        let eds = try await SharedEDS.shared.value
        let addStart = ContinuousClock.now
        try await eds.contacts("bulk", "10000", "500000")
        let adding = seconds(since: addStart)
        let start = ContinuousClock.now
        let book = try eds.book()
        #expect(await book.waitFor(timeout: .seconds(120)) { $0 == .sourceReady(SharedEDS.builtinBook) } != nil)
        let indexing = seconds(since: start)
        #expect(book.book.snapshot.contactCount >= 10_000)
        #expect(book.book.name(forHandle: "+44 7700 509999") == "Bulk 9999")
        print("AddressBook bench: 10,000 EDS contacts added through libebook in \(String(format: "%.2f", adding)) s, indexed at start (helper started, view complete) in \(String(format: "%.2f", indexing)) s")
    }
}
