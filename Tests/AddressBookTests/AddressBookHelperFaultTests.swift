import DBusTestSupport
import Foundation
import Testing
@testable import AddressBook
#if canImport(Glibc)
import Glibc
#endif

/// The `monkeycall-contacts` helper failing in every way it can (issue 53: the release daemon
/// crashed in libdispatch's event loop when a helper that exited at once was started again). The
/// address book survives each and still answers from its vCard folder; the helper is a shell
/// script (`FakeContactsHelper`), and the pauses between its starts are a millisecond.
@Suite("The address-book helper's faults")
struct AddressBookHelperFaultTests {
    static let fast = HelperRestarts(first: 0.001, longest: 0.001)

    /// A book with a vCard folder (Grace, +44 20 7946 0001) and the helper.
    private func book(_ helper: FakeContactsHelper, restarts: HelperRestarts = fast) throws -> (BookUnderTest, TemporaryFolder) {
        let folder = TemporaryFolder()
        try folder.write("grace.vcf", "BEGIN:VCARD\nVERSION:3.0\nFN:Grace\nTEL:+44 20 7946 0001\nEND:VCARD\n")
        let book = BookUnderTest(.init(folders: [folder.path], edsHelper: helper.path, helperEnvironment: ProcessInfo.processInfo.environment,
                                       numbering: ContactNumbering(region: "GB"), helperRestarts: restarts))
        return (book, folder)
    }

    /// The book still reads its folder: a card written now is found.
    private func stillServes(_ book: BookUnderTest, _ folder: TemporaryFolder) async throws {
        #expect(await book.waitForName("+44 20 7946 0001", "Grace"))
        try folder.write("alan.vcf", "BEGIN:VCARD\nVERSION:3.0\nFN:Alan\nTEL:+44 20 7946 0002\nEND:VCARD\n")
        #expect(await book.waitForName("+44 20 7946 0002", "Alan"))
    }

    @Test("a helper that exits at once, started again 100 times in a row (1 ms pauses): the book survives, says each end, and still reads its folder")
    func exitsAtOnceAHundredTimes() async throws {
        let helper = try FakeContactsHelper(FakeContactsHelper.exitsAtOnce)
        let (book, folder) = try book(helper)
        #expect(await helper.waitForStarts(100, timeout: .seconds(60)), "started \(helper.starts) times")
        #expect(await FakeContactsHelper.waitUntil { book.events.all.count { $0 == .evolutionDataServer(running: false) } >= 99 })
        try await stillServes(book, folder)
        #expect(book.problems.isEmpty, "\(book.problems)")
    }

    /// The cause of issue 53, checked directly: a read source whose pipe hangs up (EPOLLHUP) makes
    /// libdispatch delete its registration on the source's queue while its manager thread may still
    /// read it, which crashed the release daemon. The book keeps a writer on each pipe it watches,
    /// so that the pipe never hangs up, and closes both ends in the source's cancel handler.
    @Test("the helper's stdout and stderr: the book holds both ends of each pipe while it watches them (they never hang up), and closes both once the helper ended")
    func pipesNeverHangUp() async throws {
        let helper = try FakeContactsHelper(FakeContactsHelper.neverAnswers)
        let (book, _) = try book(helper, restarts: HelperRestarts(first: 60, longest: 60))
        #expect(await FakeContactsHelper.waitUntil { helper.pid != nil })
        let pid = try #require(helper.pid)
        let output = try #require(Self.pipe(of: pid, 1)), errors = try #require(Self.pipe(of: pid, 2))
        #expect(Self.descriptors(to: output) == 2, "the book holds \(Self.descriptors(to: output)) end(s) of the helper's stdout")
        #expect(Self.descriptors(to: errors) == 2, "the book holds \(Self.descriptors(to: errors)) end(s) of the helper's stderr")
        kill(pid, SIGKILL)
        #expect(await FakeContactsHelper.waitUntil { Self.descriptors(to: output) == 0 && Self.descriptors(to: errors) == 0 })
        #expect(await FakeContactsHelper.waitUntil { kill(pid, 0) != 0 && errno == ESRCH }, "not reaped")
        book.book.stop()
    }

    /// What descriptor `fd` of process `pid` is (`pipe:[INODE]`), when it is a pipe.
    static func pipe(of pid: Int32, _ fd: Int32) -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")).flatMap { $0.hasPrefix("pipe:") ? $0 : nil }
    }

    /// How many descriptors of this process are `file`.
    static func descriptors(to file: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.count { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == file }
    }

    @Test("a helper that cannot load libebook: said once, in plain words, that GNOME's address books need libebook-1.2-21; not started again until its file changes",
          arguments: [FakeContactsHelper.cannotLoad, FakeContactsHelper.exits127Silently, FakeContactsHelper.loaderErrorThenStatus1])
    func cannotLoad(_ body: String) async throws {
        let helper = try FakeContactsHelper(body)
        let (book, folder) = try book(helper)
        let said = await book.waitFor { if case .problem(let text) = $0 { text.contains("libebook-1.2-21") } else { false } }
        #expect(said != nil, "\(book.problems)")
        if case .problem(let text) = said {
            #expect(text.contains("GNOME's address books need the package libebook-1.2-21") && text.contains("sudo apt install libebook-1.2-21"), "\(text)")
            if body != FakeContactsHelper.exits127Silently { #expect(text.contains("libebook-1.2.so.21: cannot open shared object file"), "\(text)") }
        }
        // With 1 ms pauses a timer would have started it hundreds of times by now.
        try await Task.sleep(for: .milliseconds(500))
        #expect(helper.starts == 1)
        #expect(book.problems.count == 1, "\(book.problems)")
        try await stillServes(book, folder)

        // Installed again, and working now: started at once, its contact named.
        try helper.replace(with: FakeContactsHelper.works(name: "Ada EDS", number: "+44 20 7946 0003"))
        #expect(await book.waitForName("+44 20 7946 0003", "Ada EDS"))
        #expect(helper.starts == 2)
    }

    @Test("a helper that cannot load libebook, its file touched: tried once more, said once more, then waits again")
    func cannotLoadTouched() async throws {
        let helper = try FakeContactsHelper(FakeContactsHelper.cannotLoad)
        let (book, _) = try book(helper)
        #expect(await FakeContactsHelper.waitUntil { book.problems.count == 1 })
        // A new modification time is another file: a reinstall of the same package.
        try await Task.sleep(for: .milliseconds(20))
        #expect(utimensat(AT_FDCWD, helper.path, nil, 0) == 0) // touch: now.
        #expect(await helper.waitForStarts(2))
        #expect(await FakeContactsHelper.waitUntil { book.problems.count == 2 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(helper.starts == 2)
        #expect(book.problems.count == 2, "\(book.problems)")
    }

    @Test("a helper that writes a contact, then half a line, and is killed: the contact comes and goes, the half line is nothing, it is started again")
    func diesMidReply() async throws {
        let helper = try FakeContactsHelper(FakeContactsHelper.diesMidReply)
        let (book, folder) = try book(helper, restarts: HelperRestarts(first: 0.05, longest: 0.05))
        #expect(await book.waitFor { if case .changed(let snapshot) = $0 { snapshot.contactCount >= 2 } else { false } } != nil)
        #expect(await helper.waitForStarts(5))
        // Its contact went with it (at each end), and the half line never made one.
        #expect(await book.waitFor { if case .changed(let snapshot) = $0 { snapshot.contactCount == 1 } else { false } } != nil)
        #expect(!book.events.all.contains { if case .changed(let snapshot) = $0 { snapshot.contactCount > 2 } else { false } },
                "the half-written contact was read")
        try await stillServes(book, folder)
    }

    @Test("a helper that never answers: the book serves without it, and stop ends it")
    func neverAnswers() async throws {
        let helper = try FakeContactsHelper(FakeContactsHelper.neverAnswers)
        let (book, folder) = try book(helper)
        #expect(await FakeContactsHelper.waitUntil { helper.pid != nil })
        let pid = try #require(helper.pid)
        try await stillServes(book, folder)
        #expect(helper.starts == 1)
        #expect(kill(pid, 0) == 0)
        book.book.stop()
        // Ended and reaped: its pid is no one's.
        #expect(await FakeContactsHelper.waitUntil { kill(pid, 0) != 0 && errno == ESRCH })
    }

    @Test("a helper that crashes, writes garbage, or a line without end: the book survives and still reads its folder",
          arguments: [FakeContactsHelper.crashes, FakeContactsHelper.writesGarbage, FakeContactsHelper.writesEndlessLine])
    func misbehaves(_ body: String) async throws {
        let helper = try FakeContactsHelper(body)
        let (book, folder) = try book(helper)
        #expect(await helper.waitForStarts(body == FakeContactsHelper.crashes ? 50 : 3, timeout: .seconds(60)), "started \(helper.starts) times")
        try await stillServes(book, folder)
    }
}
