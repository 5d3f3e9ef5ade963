import DBusTestSupport
import Foundation
import Testing
@testable import AddressBook

/// The suite's address books read GNOME's books from the shared EDS (DBusTestSupport's `SharedEDS`).
extension SharedEDS {
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
        // Alone: no other test may activate EDS while it is stopped here.
        try await eds.exclusively { try await stoppedAndStartedAgain(eds) }
    }

    private func stoppedAndStartedAgain(_ eds: SharedEDS) async throws {
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
            // Waited for too: EDS hands a new view its contacts in batches, and the one just added
            // may come in an earlier batch than Tommy (seen once: Max there, Tommy not yet).
            #expect(await book.waitForName("+44 20 7946 0103", "Tommy Flowers"))
        }
    }

    /// A measurement, run only when asked (`MONKEYCALL_BENCH_TESTS=1`): adding 10,000 contacts
    /// takes EDS a while, and would start EDS again under the test that stops it.
    @Test("bench: 10,000 contacts in GNOME's address book indexed at start",
          .enabled(if: ProcessInfo.processInfo.environment["MONKEYCALL_BENCH_TESTS"] != nil))
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
