import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// `examples/c-gdbus`: a provider in C on bindings gdbus-codegen makes from the contract, built
/// with its own Makefile (into a folder of the test's) and run through a whole call on a test bus,
/// with the user's actions sent to the call controller by `gdbus`, as any other program would.
@Suite("examples/c-gdbus, a GLib provider in C")
struct CExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("builds with make (gdbus-codegen on the XML), registers, rings, is answered and ended through CallController, follows ringing → active → ended, and exits 0")
    func wholeCall() async throws {
        let build = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-c-example-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: build) }
        let make = try await ChildProcess.run("/usr/bin/make", ["-C", Self.root.appendingPathComponent("examples/c-gdbus").path, "BUILD=\(build.path)"],
                                              timeout: .seconds(180))
        #expect(make.status == 0, "make failed (scripts/deps installs gcc, make and libglib2.0-dev): \(make.stdout)\(make.stderr)")
        // Built where it was told, nothing in the checkout.
        let program = build.appendingPathComponent("monkeycall-c-provider").path
        try #require(FileManager.default.isExecutableFile(atPath: program))
        #expect(!FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("examples/c-gdbus/build").path))

        let daemon = try await RunningDaemon()
        let app = try ChildProcess(program, ["--incoming", "bob", "--one-call"], environment: daemon.bus.environment)
        defer { app.kill() }
        #expect(await app.waitForOutput(containing: "began"), "\(app.output)")
        #expect(await app.waitForOutput(containing: " from bob"), "\(app.output)")
        let uuid = try #require(app.standardOutput.firstMatch(of: /ringing ([0-9a-f-]{36}) from bob/)?.1).description
        #expect(await app.waitForOutput(containing: "state \(uuid) ringing"), "\(app.output)")

        // The user answers and hangs up: the controller, driven as any program may, by gdbus.
        func controller(_ method: String) async throws {
            let result = try await daemon.run("/usr/bin/gdbus", [
                "call", "--session", "--dest", Telephony1.busName, "--object-path", Telephony1.rootPath.rawValue,
                "--method", "\(Telephony1.CallController.interface).\(method)", uuid,
            ])
            #expect(result.status == 0, "gdbus \(method): \(result.stderr)")
        }
        try await controller("AnswerCall")
        #expect(await app.waitForOutput(containing: "action answer \(uuid)"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "state \(uuid) active"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "audio on"), "\(app.output)")
        try await controller("EndCall")
        #expect(await app.waitForOutput(containing: "action end \(uuid)"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "state \(uuid) ended"), "\(app.output)")
        #expect(await app.waitForExit() == 0, "\(app.output)")

        // Each state once, in order, as the app saw them.
        let states = app.standardOutput.split(separator: "\n").filter { $0.hasPrefix("state \(uuid) ") }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(states == ["ringing", "active", "ended"], "\(app.output)")
        // The service recorded it: answered, from the C app.
        let recents = try await daemon.cli("recents", "--json", "--limit", "1")
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(recents.stdout.utf8)) as? [[String: Any]])?.first, "\(recents.stdout)")
        #expect(entry["CallUUID"] as? String == uuid && entry["Status"] as? String == "answered" && entry["ProviderName"] as? String == "CPhone", "\(entry)")
    }
}
