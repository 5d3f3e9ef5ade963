import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The surfaces beside the API's calls, fuzzed by `monkeycall-fuzz --surface …`: AddressBook, GNOME
/// Shell's search provider (`org.gnome.Shell.SearchProvider2` at `/Search`) and KRunner's runner
/// (`org.kde.krunner1` at `/Runner`) as monkeycalld serves them, over an address book of vCards, and
/// the real Phone app's `org.freedesktop.Application` (`org.monkeycall.Phone`, under Xvfb: the one
/// the daemon asks when a result is activated). A host app fuzzes all four, and at the same time a
/// Flatpak-style sandboxed app (org.example.Fuzzer) the three the contract keeps from it. Passes
/// when every call is answered, with a reply or an error its surface documents (GLib's NotSupported
/// for the Phone app's Open), the sandboxed app never gets a reply on a host-only member, the big
/// first messages are refused by name, and the daemon and the Phone app still run and answer.
@Suite("AddressBook, GNOME Shell's and KRunner's search, and the Phone app's actions, fuzzed", .serialized)
struct SurfaceFuzzNewSurfacesTests {
    /// Calls of the host fuzzer (four surfaces) and of the sandboxed one (three):
    /// `MONKEYCALL_FUZZ_NEW_SURFACES_CALLS` for the host's (the sandboxed app's are half), else
    /// 2,000 and 1,000, or 100,000 and 50,000 with `MONKEYCALL_FUZZ_LONG=1`.
    static var hostCalls: Int {
        ProcessInfo.processInfo.environment["MONKEYCALL_FUZZ_NEW_SURFACES_CALLS"].flatMap { Int($0) } ?? (FuzzSettings.long ? 100_000 : 2_000)
    }

    static let hostSurfaces = ["addressbook", "search", "runner", "phone"]
    static let sandboxedSurfaces = ["addressbook", "search", "runner"]

    /// The people of the address book: what the good queries find (and some that test the
    /// results' text: a name with a bidi override and markup, one of 300 letters, many numbers).
    static let people: [(name: String, numbers: [String])] = [
        ("Ada Lovelace", ["+44 20 7946 0001"]), ("Zoë Ångström", ["+1 408 555 0199"]), ("Adam Smith", ["0161 496 0000"]),
        ("Grace Hopper", ["+1 212 555 0100", "020 7946 0100"]), ("Mallory \u{202E}evil <b>bold</b>", ["+1 408 555 0142"]),
        (String(repeating: "Long", count: 75), ["+44 20 7946 0999"]), ("Many Numbers", (10..<40).map { "+1 408 555 01\($0)" }),
    ]

    @Test("host: every call on each new surface answered properly; sandboxed: refused; daemon and Phone app alive",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb") && Sandbox.isAvailable, "needs Xvfb and bubblewrap"))
    func newSurfaces() async throws {
        let started = ContinuousClock.now
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let contacts = bus.directory.appendingPathComponent("contacts")
        try FileManager.default.createDirectory(at: contacts, withIntermediateDirectories: true)
        for (index, person) in Self.people.enumerated() {
            let tels = person.numbers.map { "TEL;TYPE=CELL:\($0)\r\n" }.joined()
            try Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:fuzz-\(index)\r\nFN:\(person.name)\r\n\(tels)END:VCARD\r\n".utf8)
                .write(to: contacts.appendingPathComponent("person\(index).vcf"))
        }
        // The timeouts of an hour: the victim's ringing call, and the calls activated results start, stay.
        let daemon = try await bus.startMonkeycalld(["--contacts", contacts.path, "--registration-rate", "0",
                                                     "--action-timeout", "3600", "--ring-timeout", "3600"],
                                                    // National numbers in the cards (`0161 …`) read as GB's.
                                                    environment: ["LANG": "en_GB.UTF-8", "LC_ALL": "", "LC_ADDRESS": ""])
        defer { daemon.kill() }
        let user = try Connection(address: bus.address)
        defer { user.close() }
        try await Self.waitForContacts(Self.people.count, user)

        // Another app that calls phone numbers, with a ringing call: results route to it (`Actions`
        // lists it, `Run` may name it), and the Phone app's `show-call` has a call to show.
        let victim = try Connection(address: bus.address)
        defer { victim.close() }
        let registered = try await victim.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Manager.interface,
                                               member: "RegisterProvider", [.vardict([
                                                   "Name": .string("Victim"),
                                                   "SupportedHandleTypes": .array(element: "s", ["phone-number", "generic", "email-address"].map { .string($0) }),
                                               ])], timeout: FuzzedDaemon.replyDeadline)
        guard case .objectPath(let victimPath)? = registered.first else { throw TestSupportError("no provider for the victim: \(registered)") }
        let victimCall = UUID().uuidString.lowercased()
        _ = try await victim.call(destination: Telephony1.busName, path: victimPath, interface: Telephony1.Provider.interface, member: "ReportNewIncomingCall",
                                  [.string(victimCall), .vardict(["Handle": .string("+442079460001")])], timeout: FuzzedDaemon.replyDeadline)

        // The real Phone app on this bus, as the desktop runs it: the daemon asks it (LaunchSearch,
        // a result no app can call), and the host fuzzer calls it.
        let display = try await VirtualDisplay.start()
        defer { display.server.kill() }
        var environment = bus.environment
        environment["DISPLAY"] = display.name
        environment["GDK_BACKEND"] = "x11"
        environment["GTK_A11Y"] = "none"
        environment["NO_AT_BRIDGE"] = "1"
        environment["LANGUAGE"] = "en"
        environment["MONKEYCALL_PHONE_REPORT_FRAME"] = "1"
        environment["XDG_STATE_HOME"] = bus.directory.appendingPathComponent("state").path
        let phone = try ChildProcess(BuiltProducts.path("monkeycall-phone"), [], environment: environment)
        defer { phone.kill() }
        guard await phone.waitForOutput(containing: "first frame", timeout: .seconds(60)) else {
            throw TestSupportError("monkeycall-phone drew no frame: \(phone.output)")
        }
        #expect(try await user.nameOwner(PhoneApp.appID) != nil, "the Phone app owns no \(PhoneApp.appID)")
        let ready = ContinuousClock.now

        let seed = FuzzSettings.seeds.first ?? 1
        let fuzzer = BuiltProducts.path("monkeycall-fuzz")
        let common = ["--in-flight", "32", "--foreign-path", victimPath.rawValue, "--foreign-call", victimCall]
        let host = try ChildProcess(fuzzer, common + Self.hostSurfaces.flatMap { ["--surface", $0] }
                                    + ["--calls", "\(Self.hostCalls)", "--address", bus.address, "--seed", "\(seed)", "--caller", "host"])
        let sandboxed = try Sandbox.flatpak(appID: "org.example.Fuzzer", bus: bus, executable: fuzzer,
                                            common + Self.sandboxedSurfaces.flatMap { ["--surface", $0] }
                                            + ["--calls", "\(Self.hostCalls / 2)", "--seed", "\(seed &+ 1)", "--caller", "org.example.Fuzzer"],
                                            readOnly: [BuiltProducts.directory.path, try await SurfaceFuzzTests.swiftRuntimeDirectory(of: fuzzer)])
        let deadline: Duration = .seconds(FuzzSettings.long ? 4 * 3600 : 300)
        let hostStatus = await host.waitForExit(timeout: deadline)
        let sandboxedStatus = await sandboxed.waitForExit(timeout: deadline)
        let fuzzed = ContinuousClock.now
        host.kill()
        sandboxed.kill()

        guard daemon.isRunning else {
            Issue.record("monkeycalld died under the fuzzers:\n\(SurfaceFuzzTests.crashReport(daemon.output))\nhost fuzzer: \(host.output.suffix(4000))")
            return
        }
        #expect(phone.isRunning, "the Phone app died under the fuzzers: \(phone.output.suffix(4000))\nhost fuzzer: \(host.output.suffix(4000))")

        let runs = [("host", host, hostStatus, Self.hostSurfaces, Self.hostCalls), ("org.example.Fuzzer", sandboxed, sandboxedStatus, Self.sandboxedSurfaces, Self.hostCalls / 2)]
        for (name, child, status, surfaces, calls) in runs {
            #expect(status != nil, "the \(name) fuzzer did not finish within \(deadline)")
            guard let result = SurfaceFuzzTests.result(child.standardOutput) else {
                Issue.record("the \(name) fuzzer printed no result (status \(String(describing: status))): \(child.output.suffix(4000))")
                continue
            }
            #expect(status == 0, "the \(name) fuzzer exited with \(String(describing: status)): \(child.standardError.suffix(4000))")
            // 0 improper answers: each call a reply or an error its surface documents (and no reply to the sandboxed app on a host-only member).
            let improper = result["improper"] as? [String: Int] ?? [:]
            #expect(improper.isEmpty, "the \(name) fuzzer got improper answers: \(improper); first of each: \(result["improperExamples"] ?? [:])")
            #expect((result["calls"] as? Int) == calls && (result["answered"] as? Int) == calls,
                    "the \(name) fuzzer sent \(result["calls"] ?? 0) and had \(result["answered"] ?? 0) answered of \(calls)")
            #expect(result["alive"] as? Bool == true, "the service did not answer Ping after the \(name) fuzzer")
            #expect((result["lostConnections"] as? [Int] ?? []).isEmpty, "the bus dropped the \(name) fuzzer's connections: \(result["lostConnections"] ?? [])")
            #expect((result["improperProbes"] as? [String] ?? []).isEmpty, "\(result["improperProbes"] ?? [])")
            let probes = result["probes"] as? [String: Int] ?? [:]
            // The big first messages of each surface were sent (and answered properly: `improperProbes`).
            let expected = ["addressbook": ["16 MiB query to AddressBook.Search: "], "search": ["16 MiB term to GetInitialResultSet: ", "200,000 terms to GetInitialResultSet: "],
                            "runner": ["16 MiB query to Match: "], "phone": ["1 MiB number to the Phone app's app.call: "]]
            for probe in surfaces.flatMap({ expected[$0] ?? [] }) {
                #expect(probes.keys.contains { $0.hasPrefix(probe) }, "the \(name) fuzzer sent no \(probe)probe: \(probes)")
            }
            // Every surface asked was fuzzed, a fair share each.
            let bySurface = result["bySurface"] as? [String: [String: Int]] ?? [:]
            #expect(Set(bySurface.keys) == Set(surfaces), "the \(name) fuzzer covered \(bySurface.keys.sorted())")
            for surface in surfaces {
                let outcomes = bySurface[surface] ?? [:]
                let total = outcomes.values.reduce(0, +)
                #expect(total >= calls / (surfaces.count * 2), "the \(name) fuzzer sent \(total) calls to \(surface)")
                if name == "host" {
                    // Mostly good calls: most of them do what they ask.
                    #expect((outcomes["reply"] ?? 0) * 4 >= total, "\(surface) answered the host few replies: \(outcomes)")
                } else {
                    #expect((outcomes[DBusError.Name.accessDenied] ?? 0) * 10 >= total * 8, "\(surface) refused the sandboxed app too seldom: \(outcomes)")
                }
            }
            if name == "host" { #expect(result["phoneAlive"] as? Bool == true, "the Phone app did not answer Ping after the host fuzzer") }
            let said = bySurface.sorted { $0.key < $1.key }.map { surface, outcomes in
                "  \(surface): \(outcomes.values.reduce(0, +)) calls: " + outcomes.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                    .map { "\($0.value) \($0.key.replacing("org.freedesktop.DBus.Error.", with: ""))" }.joined(separator: ", ")
            }
            print("new surfaces fuzzed, \(name): \(result["calls"] ?? 0) calls in \(result["seconds"] ?? 0) s\n\(said.joined(separator: "\n"))\n"
                  + probes.keys.sorted().map { "  probe \($0)" }.joined(separator: "\n") + "\n"
                  + (result["slowest"] as? [String] ?? []).prefix(4).map { "  slowest: \($0)" }.joined(separator: "\n"))
        }

        // After: the address book still finds its people, and the Phone app still runs its actions.
        let found = try await user.call(Telephony1.AddressBook.search, destination: Telephony1.busName, path: Telephony1.rootPath, "lovelace", 0)
        #expect(found.count == 1, "AddressBook.Search(\"lovelace\") after the fuzzers: \(found)")
        let ids = try await user.call(Desktop.SearchProvider2.getInitialResultSet, destination: Telephony1.busName, path: Telephony1.searchPath, ["ada"])
        #expect(!ids.isEmpty, "GNOME Shell's search for \"ada\" after the fuzzers found nothing")
        _ = try await user.call(destination: PhoneApp.appID, path: PhoneApp.objectPath, interface: Desktop.Application.interface, member: "ActivateAction",
                                [.string(PhoneApp.Action.search), .array(element: "v", [.variant(.string("ada"))]), .vardict([:])],
                                timeout: FuzzedDaemon.replyDeadline)
        #expect(daemon.isRunning && phone.isRunning)
        // GLib's criticals are the app's own mistakes (a NULL where an object was due), whatever it was asked.
        let criticals = phone.output.split(separator: "\n").filter { $0.contains("-CRITICAL **") }
        #expect(criticals.isEmpty, "the Phone app said: \(criticals.prefix(8).joined(separator: "\n"))")
        print("new surfaces fuzzed: set up in \(ready - started), fuzzed in \(fuzzed - ready), \(ContinuousClock.now - started) in all")
    }

    /// Waits until the daemon's index holds `count` contacts (it reads the folder in the background).
    static func waitForContacts(_ count: Int, _ user: Connection) async throws {
        let deadline = ContinuousClock.now + Deadlines.stretched(.seconds(20))
        while true {
            let known: UInt32 = try await user.get(Telephony1.AddressBook.count, destination: Telephony1.busName, path: Telephony1.rootPath)
            if known == count { return }
            guard ContinuousClock.now < deadline else { throw TestSupportError("the address book holds \(known) contacts, not \(count)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
