import AddressBook
import DBusTestSupport
import Foundation
import Logging
import Testing

/// A fresh folder under the temporary directory, removed at deinit.
final class TemporaryFolder: @unchecked Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "AddressBookTests-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // A rename into place, as vdirsyncer does; not Foundation's atomic write, whose descriptor a
        // program another test starts meanwhile would inherit (see `writeClosingOnExec`): a store
        // deleted and made again then looked never deleted.
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
        try writeClosingOnExec(text, to: temporary)
        guard rename(temporary.path, url.path) == 0 else { throw TestSupportError("cannot rename \(temporary.path): errno \(errno)") }
    }
}

/// An address book under test with its events, and waits with deadlines.
final class BookUnderTest: @unchecked Sendable {
    let events = EventBuffer<AddressBookEvent>()
    let book: AddressBook

    init(_ configuration: AddressBook.Configuration) {
        var logger = Logger(label: "AddressBookTests")
        logger.logLevel = .critical
        let events = events
        book = AddressBook(configuration: configuration, logger: logger) { events.append($0) }
        book.start()
    }

    deinit { book.stop() }

    /// Waits until `handle` names `expected` (nil: until it names no one).
    func waitForName(_ handle: String, _ expected: String?, timeout: Duration = .seconds(20)) async -> Bool {
        guard let number = book.configuration.numbering.e164(handle) else { return false }
        if book.snapshot.name(for: number) == expected { return true }
        let event = await events.next(timeout: timeout) { event in
            if case .changed(let snapshot) = event { return snapshot.name(for: number) == expected }
            return false
        }
        return event != nil
    }

    func waitFor(timeout: Duration = .seconds(20), _ predicate: @escaping (AddressBookEvent) -> Bool) async -> AddressBookEvent? {
        await events.next(timeout: timeout, where: predicate)
    }

    var problems: [String] {
        events.all.compactMap { if case .problem(let text) = $0 { text } else { nil } }
    }
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
