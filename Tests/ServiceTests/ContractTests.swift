import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// `dbus/org.monkeycall.Telephony1.xml` is generated from the specs in
/// MonkeyCallAPI (`scripts/generate-api-xml`): it must say exactly what they say,
/// and be a document every XML tool reads.
@Suite("The committed contract is the one the specs generate")
struct ContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let contract = root.appendingPathComponent("dbus/org.monkeycall.Telephony1.xml")

    @Test("the committed XML is what the specs generate (run scripts/generate-api-xml after changing a spec)")
    func committedXMLMatchesTheSpecs() throws {
        let committed = try String(contentsOf: Self.contract, encoding: .utf8)
        let generated = Telephony1.introspectionXML
        let committedLines = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let generatedLines = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let firstDifference = zip(committedLines, generatedLines).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(committed == generated, """
            dbus/org.monkeycall.Telephony1.xml differs from the specs at line \((firstDifference?.offset ?? min(committedLines.count, generatedLines.count)) + 1): \
            committed '\(firstDifference.map { String($0.element.0) } ?? "")', generated '\(firstDifference.map { String($0.element.1) } ?? "")'
            """)
    }

    @Test("the XML is well-formed for a real XML parser (Python's expat), and declares every spec'd member")
    func xmlParses() async throws {
        let script = """
            import sys, xml.dom.minidom
            doc = xml.dom.minidom.parse(sys.argv[1])
            for i in doc.getElementsByTagName('interface'):
                for kind in ('method', 'signal', 'property'):
                    for m in i.getElementsByTagName(kind):
                        print(i.getAttribute('name'), kind, m.getAttribute('name'))
            """
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, Self.contract.path])
        #expect(result.status == 0, "python3 cannot parse the contract: \(result.stderr)")
        let parsed = Set(result.stdout.split(separator: "\n").map(String.init))
        let declared = Set(Telephony1.interfaces.flatMap { interface in
            interface.members.map { "\(interface.name) \($0.kind.rawValue) \($0.name)" }
        })
        #expect(parsed == declared)
    }

    @Test("a C/GLib app can generate bindings from it (gdbus-codegen)")
    func gdbusCodegenAcceptsIt() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-codegen-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try await ChildProcess.run("/usr/bin/gdbus-codegen", [
            "--interface-prefix", "org.monkeycall.", "--c-namespace", "MonkeyCall", "--generate-c-code",
            output.appendingPathComponent("monkeycall-generated").path, Self.contract.path,
        ], timeout: .seconds(60))
        #expect(result.status == 0, "gdbus-codegen failed: \(result.stderr)")
        let header = try String(contentsOf: output.appendingPathComponent("monkeycall-generated.h"), encoding: .utf8)
        #expect(header.contains("monkey_call_telephony1_provider_call_report_new_incoming_call"))
    }

    @Test("every method lists the errors it may return; each is an API or standard D-Bus error")
    func methodsListTheirErrors() {
        let standard: Set<String> = [DBusError.Name.invalidArgs, DBusError.Name.accessDenied, DBusError.Name.limitsExceeded,
                                     DBusError.Name.notSupported, DBusError.Name.unknownObject, DBusError.Name.failed]
        for interface in Telephony1.interfaces {
            for member in interface.members where member.kind == .method {
                #expect(!member.errors.isEmpty, "\(interface.name).\(member.name) lists no errors")
                for error in member.errors {
                    #expect(APIError(rawValue: error) != nil || standard.contains(error), "\(member.name): unknown error \(error)")
                }
            }
        }
    }
}

/// The contract's names are written once: under Sources/, every member name and
/// error name of the API appears as a string literal only in the specs
/// (Sources/MonkeyCallAPI/Telephony1.swift, and CallRecord.swift for the Call interface's properties).
@Suite("Each API name is written once")
struct NamesWrittenOnceTests {
    /// Literals that are the same word but not the API's name, with the reason.
    static let elsewhere: [String: String] = [
        // The ringing notification's button label, text for a person.
        "Sources/TelephonyService/Presenter/CallNotification.swift Answer": "a button label",
        "Sources/TelephonyService/Presenter/CallNotification.swift Silence": "a button label",
        // The link question's buttons, text for a person.
        "Sources/TelephonyService/Links/LinkConfirmation.swift Call": "a button label",
        "Sources/TelephonyService/Links/LinkConfirmation.swift Cancel": "a button label",
        // A desktop file's key, not the API's Name.
        "Sources/TelephonyService/Presenter/AppNames.swift Name": "a desktop file key",
        // The pure layers cannot see the specs (no D-Bus there): their messages name the key or method.
        "Sources/TelephonyCore/Switchboard.swift Handle": "an error message's key name",
        "Sources/TelephonyCore/Switchboard+Transactions.swift Handle": "an error message's key name",
        "Sources/CallDirectory/DirectoryUpdate.swift RemoveBlockingEntries": "an error message's method name",
        "Sources/CallDirectory/DirectoryUpdate.swift RemoveAllBlockingEntries": "an error message's method name",
        "Sources/CallDirectory/DirectoryUpdate.swift RemoveIdentificationEntries": "an error message's method name",
        "Sources/CallDirectory/DirectoryUpdate.swift RemoveAllIdentificationEntries": "an error message's method name",
        // The GNOME Shell stage's stand-ins: logind's User and GDM's Manager properties.
        "Sources/DBusTestSupport/GnomeShellSystemBus.swift Name": "logind's User property",
        "Sources/DBusTestSupport/GnomeShellSystemBus.swift State": "logind's User property",
        "Sources/DBusTestSupport/GnomeShellSystemBus.swift Version": "GDM's Manager property",
        // Words of the Phone app a person reads, which happen to be API names too.
        "Sources/PhoneModel/Format.swift Outgoing": "a translated word on screen",
        "Sources/PhoneModel/Format.swift Silenced": "a translated word on screen",
        "Sources/monkeycall-phone/RecentsPage.swift Cancel": "a translated button",
        "Sources/MonkeyCallClient/Contact.swift Name": "an AddressBook.Search key, read before that interface's spec lands",
    ]

    @Test func memberAndErrorNamesAppearInTheSpecsOnly() throws {
        let names = Set(Telephony1.interfaces.flatMap { $0.members.map(\.name) } + APIError.allCases.map(\.rawValue))
        let sources = ContractTests.root.appendingPathComponent("Sources")
        let specs: Set = ["Sources/MonkeyCallAPI/Telephony1.swift", "Sources/MonkeyCallAPI/CallRecord.swift"]
        var found: [String] = []
        for case let url as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)! where url.pathExtension == "swift" {
            let relative = "Sources/" + url.path.dropFirst(sources.path.count + 1)
            // The surface fuzzer plays a hostile app: it writes option keys and members as such an app
            // would (and calls them wrongly on purpose). Its method list still comes from the specs.
            guard !specs.contains(relative), !relative.hasPrefix("Sources/monkeycall-fuzz/"), !relative.hasPrefix("Sources/FuzzSupport/") else { continue }
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                // Whole literals only: "Answer", not "Answer the call".
                for literal in line.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter({ $0.offset % 2 == 1 }).map(\.element)
                where names.contains(String(literal)) && Self.elsewhere["\(relative) \(literal)"] == nil {
                    found.append("\(relative): \"\(literal)\"")
                }
            }
        }
        #expect(found.isEmpty, "API names written outside the specs: \(found)")
    }
}
