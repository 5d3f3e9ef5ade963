import AddressBook
import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The service with an address-book helper (`monkeycall-contacts`) that fails in each way it can
/// (issue 53: the release daemon died with SIGSEGV in libdispatch's event loop after a helper that
/// exited at once was started again). The service survives each and keeps serving calls, naming
/// the caller from its vCard folder. The helper is a shell script (`FakeContactsHelper`), started
/// again after 1 ms pauses.
@Suite("The service with a failing address-book helper")
struct HelperFaultTests {
    enum Fault: String, CaseIterable, Sendable {
        case exitsAtOnce, cannotLoad, diesMidReply, neverAnswers, crashes, writesGarbage

        var body: String {
            switch self {
            case .exitsAtOnce: FakeContactsHelper.exitsAtOnce
            case .cannotLoad: FakeContactsHelper.cannotLoad
            case .diesMidReply: FakeContactsHelper.diesMidReply
            case .neverAnswers: FakeContactsHelper.neverAnswers
            case .crashes: FakeContactsHelper.crashes
            case .writesGarbage: FakeContactsHelper.writesGarbage
            }
        }

        /// Starts to wait for before the calls: 100 for the helper that ends at once.
        var starts: Int {
            switch self {
            case .exitsAtOnce, .crashes: 100
            case .cannotLoad, .neverAnswers: 1
            case .diesMidReply, .writesGarbage: 5
            }
        }
    }

    @Test("a helper that exits at once (100 starts), cannot load libebook, dies mid-reply, never answers, crashes, writes garbage: calls ring, named from the vCard folder",
          arguments: Fault.allCases)
    func survives(_ fault: Fault) async throws {
        let helper = try FakeContactsHelper(fault.body)
        let folder = try ContactFolder()
        try folder.add("dave.vcf", name: "Dave Contact", "+1 408 555 0101")
        let fixture = try await ServiceFixture { options in
            options.addressBook = AddressBook.Configuration(folders: [folder.path], edsHelper: helper.path,
                                                            helperEnvironment: ProcessInfo.processInfo.environment,
                                                            numbering: ContactNumbering(region: "US"),
                                                            helperRestarts: HelperRestarts(first: 0.001, longest: 0.001))
        }
        do {
            try await ringsAndNames(fixture, helper, fault)
        } catch {
            await fixture.service.stop()
            throw error
        }
        // The helper goes with the service, before its folder does.
        await fixture.service.stop()
        #expect(fixture.warnings.all.filter { $0.contains("cannot start") }.isEmpty, "\(fixture.warnings.all)")
    }

    private func ringsAndNames(_ fixture: ServiceFixture, _ helper: FakeContactsHelper, _ fault: Fault) async throws {
        #expect(await helper.waitForStarts(fault.starts, timeout: .seconds(60)), "started \(helper.starts) times")
        #expect(try await ContactTests.waitUntilNamed("+14085550101", "Dave Contact") {
            try await fixture.root(ContactTests.directory, "Identify", [.string($0)])
        })
        let app = try await fixture.provider("Monkey")
        for _ in 0..<3 {
            let uuid = try await app.reportIncoming("+1 408 555 0101")
            #expect(await fixture.state(uuid) == "ringing")
            #expect(try await fixture.callProperty(uuid, "CallerName") == .string("Dave Contact"))
            try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        }
        if fault == .cannotLoad {
            // Said once, and not started again (a timer of 1 ms would have started it hundreds of times).
            #expect(helper.starts == 1)
            let said = fixture.warnings.all.filter { $0.contains("need the package libebook-1.2-21") }
            #expect(said.count == 1, "\(fixture.warnings.all)")
        }
    }
}
