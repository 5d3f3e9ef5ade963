import DBusTestSupport
import Foundation
import Testing
@testable import AddressBook

private func card(_ name: String, _ tels: String...) -> String {
    "BEGIN:VCARD\nVERSION:3.0\nFN:\(name)\n" + tels.map { "TEL:\($0)\n" }.joined() + "END:VCARD\n"
}

@Suite struct AddressBookFolderTests {
    private func folderBook(_ folders: [String]) -> BookUnderTest {
        BookUnderTest(.init(folders: folders, edsHelper: nil, numbering: ContactNumbering(region: "GB")))
    }

    @Test("vCard files written, changed, moved and deleted while it runs, in nested folders, with a damaged card")
    func followed() async throws {
        let folder = TemporaryFolder()
        try folder.write("ada.vcf", card("Ada", "+44 20 7946 0001"))
        let book = folderBook([folder.path])
        #expect(await book.waitForName("020 7946 0001", "Ada"))

        try folder.write("sub/deeper/grace.vcf", card("Grace", "0161 496 0002")) // Folders made while it runs.
        #expect(await book.waitForName("+44 161 496 0002", "Grace"))

        try folder.write("ada.vcf", card("Ada L.", "+44 20 7946 0003")) // Changed: the old number goes.
        #expect(await book.waitForName("+44 20 7946 0003", "Ada L."))
        #expect(book.book.name(forHandle: "+44 20 7946 0001") == nil)

        try folder.write("bad.vcf", "BEGIN:VCARD\nFN:Damaged\nno colon here\nEND:VCARD\n" + card("Next", "+44 20 7946 0004"))
        #expect(await book.waitForName("+44 20 7946 0004", "Next"))
        #expect(book.problems.contains { $0.contains(folder.path + "/bad.vcf:3") })

        try FileManager.default.removeItem(atPath: folder.path + "/ada.vcf")
        #expect(await book.waitForName("+44 20 7946 0003", nil))

        let away = NSTemporaryDirectory() + "moved-\(UUID())"
        defer { try? FileManager.default.removeItem(atPath: away) }
        try FileManager.default.moveItem(atPath: folder.path + "/sub", toPath: away)
        #expect(await book.waitForName("+44 161 496 0002", nil)) // A folder moved away takes its cards.
        #expect(book.book.name(forHandle: "+44 20 7946 0004") == "Next")
    }

    /// Deleting the store's parent (`rm -r`) races with the store's IN_DELETE_SELF: the parent, the
    /// nearest folder left when that is handled, may go between the look and the watch, and the
    /// store must then be waited for from the folder above (once missed: no event came after the
    /// deletion, so a store made again at once was never read).
    @Test("a folder that does not exist yet is read once it is made (KPeople's store on a new account); deleted with its parent, its cards go; made again at once, it is followed again")
    func appearsLater() async throws {
        let home = TemporaryFolder()
        let store = home.path + "/data/kpeoplevcard"
        let book = folderBook([store])
        #expect(await book.waitFor { $0 == .sourceReady("vcf:" + store) } != nil)
        try home.write("data/kpeoplevcard/own/x.vcf", card("Later", "+44 20 7946 0010"))
        #expect(await book.waitForName("+44 20 7946 0010", "Later"))
        try FileManager.default.removeItem(atPath: home.path + "/data")
        #expect(await book.waitForName("+44 20 7946 0010", nil))
        try home.write("data/kpeoplevcard/y.vcf", card("Again", "+44 20 7946 0011"))
        #expect(await book.waitForName("+44 20 7946 0011", "Again"), "events: \(book.events.all)")
    }

    /// A measurement, not a check: 10,000 files and a million lookups take a core for a while, so
    /// it runs only when asked (`MONKEYCALL_BENCH_TESTS=1`); monkeycall-bench prints the figure.
    @Test("bench: 10,000 vCard files indexed at start, and the cost of a lookup",
          .enabled(if: ProcessInfo.processInfo.environment["MONKEYCALL_BENCH_TESTS"] != nil))
    func indexTenThousand() async throws {
        let folder = TemporaryFolder()
        try SampleContacts.writeVCards(count: 10_000, to: folder.path)
        let start = ContinuousClock.now
        let book = folderBook([folder.path])
        #expect(await book.waitFor(timeout: .seconds(120)) { $0 == .sourceReady("vcf:" + folder.path) } != nil)
        let indexing = seconds(since: start)
        #expect(book.book.snapshot.contactCount == 10_000)
        let lookups = 1_000_000
        let lookupStart = ContinuousClock.now
        var found = 0
        for n in 0..<lookups where book.book.name(for: SampleContacts.number(n % 20_000)) != nil { found += 1 }
        let perLookup = seconds(since: lookupStart) / Double(lookups) * 1e9
        #expect(found == lookups / 2)
        print("AddressBook bench: 10,000 vCard files indexed in \(String(format: "%.2f", indexing)) s; a lookup by number \(String(format: "%.0f", perLookup)) ns")
    }
}
