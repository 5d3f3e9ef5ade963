import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The real `monkeycall` binary against a real `monkeycalld` on a private bus, as a user meets it.
@Suite("monkeycall: what a user meets")
struct CLITests {
    static var monkeycall: String { BuiltProducts.path("monkeycall") }

    /// Runs `monkeycall` on a terminal (a pty, through util-linux `script`), typing `input`; the output
    /// with the terminal's CRLF made LF.
    static func onTerminal(_ arguments: [String], input: String = "", environment: [String: String]) async throws -> (status: Int32, output: String) {
        let command = ([monkeycall] + arguments).map(shellQuoted).joined(separator: " ")
        let typed = input.isEmpty ? "" : "printf \(shellQuoted(input)) | "
        let result = try await ChildProcess.run("/bin/sh", ["-c", "\(typed)/usr/bin/script -qec \(shellQuoted(command)) /dev/null"], environment: environment)
        return (result.status, (result.stdout + result.stderr).replacingOccurrences(of: "\r\n", with: "\n"))
    }

    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: Item 6: finding the bus

    @Test("without DBUS_SESSION_BUS_ADDRESS, monkeycalld and monkeycall use $XDG_RUNTIME_DIR/bus; --address works before the subcommand")
    func sessionBusDiscovery() async throws {
        let bus = try await PrivateBus.start()
        // What systemd gives a user session: the bus socket at $XDG_RUNTIME_DIR/bus.
        let runtime = bus.directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let socket = try #require(bus.address.split(separator: ",").first.flatMap { $0.hasPrefix("unix:path=") ? $0.dropFirst("unix:path=".count) : nil })
        try FileManager.default.createSymbolicLink(atPath: runtime.appendingPathComponent("bus").path, withDestinationPath: String(socket))
        var environment = bus.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["XDG_RUNTIME_DIR"] = runtime.path

        let daemon = try ChildProcess(BuiltProducts.path("monkeycalld"), ["--database", bus.directory.appendingPathComponent("monkeycall.sqlite").path],
                                      environment: environment)
        defer { daemon.kill() }
        #expect(await daemon.waitForOutput(containing: "serving \(Telephony1.busName)"), "\(daemon.output)")
        let status = try await ChildProcess.run(Self.monkeycall, ["status"], environment: environment)
        #expect(status.status == 0 && status.stdout.contains("is running"), "\(status.stdout)\(status.stderr)")

        var bare = environment
        bare["XDG_RUNTIME_DIR"] = nil
        let before = try await ChildProcess.run(Self.monkeycall, ["--address", bus.address, "status"], environment: bare)
        #expect(before.status == 0 && before.stdout.contains("is running"), "\(before.stdout)\(before.stderr)")
        let after = try await ChildProcess.run(Self.monkeycall, ["status", "--address", bus.address], environment: bare)
        #expect(after.status == 0, "\(after.stderr)")
        let nowhere = try await ChildProcess.run(Self.monkeycall, ["status"], environment: bare)
        #expect(nowhere.status != 0 && nowhere.stderr.contains("XDG_RUNTIME_DIR"), "\(nowhere.stderr)")
    }

    // MARK: Item 7: tables; issue 19: caller text cleaned

    @Test("calls and recents: aligned columns under a header on a terminal, tab-separated without one when piped; mute, hold, name, duration, ASCII time")
    func tables() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("+14085550123", update: [Telephony1.Key.localizedCallerName: .string("Alice Smith")])

        let piped = try await daemon.cli("calls")
        #expect(piped.stdout == "\(uuid)\tringing\tincoming\tMonkey\t+14085550123\tAlice Smith\tno\tno\n", "\(piped.stdout)\(piped.stderr)")
        let terminal = try await Self.onTerminal(["calls"], environment: daemon.bus.environment)
        let lines = terminal.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(terminal.output)")
        let header = try #require(lines.first), row = try #require(lines.last)
        #expect(header.hasPrefix("UUID") && header.contains("MUTED") && header.contains("ON HOLD"), "\(header)")
        // Aligned: each column starts where its heading does.
        for (heading, cell) in [("STATE", "ringing"), ("APP", "Monkey"), ("NAME", "Alice Smith"), ("MUTED", "no")] {
            #expect(header.range(of: heading)?.lowerBound.utf16Offset(in: header) == row.range(of: cell)?.lowerBound.utf16Offset(in: row),
                    "\(heading) not over \(cell):\n\(terminal.output)")
        }

        #expect(try await daemon.cli("answer", uuid).status == 0)
        try await app.perform("answer")
        #expect(try await daemon.cli("mute", uuid).status == 0)
        try await app.perform("set-muted")
        #expect(try await daemon.cli("calls").stdout.hasSuffix("\tyes\tno\n"))
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])

        let recents = try await daemon.cli("recents")
        let fields = recents.stdout.trimmingCharacters(in: .newlines).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 8, "\(recents.stdout)")
        #expect(fields.dropFirst(2).dropLast() == ["answered", "incoming", "Monkey", "+14085550123", "Alice Smith"], "\(fields)")
        #expect(fields.last?.wholeMatch(of: /\d+:\d\d/) != nil, "duration: \(fields)")
        let ended = fields.count > 1 ? fields[1] : ""
        #expect(ended.wholeMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d/) != nil && ended.unicodeScalars.allSatisfy(\.isASCII), "\(ended.debugDescription)")
        let recentsOnTerminal = try await Self.onTerminal(["recents"], environment: daemon.bus.environment)
        #expect(recentsOnTerminal.output.hasPrefix("ID") && recentsOnTerminal.output.contains("DURATION"), "\(recentsOnTerminal.output)")
    }

    @Test("a caller's name with ESC sequences and line breaks cannot colour the terminal or fake a line: calls, recents, watch")
    func callerTextCleaned() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let watch = try ChildProcess(Self.monkeycall, ["watch"], environment: daemon.bus.environment)
        defer { watch.kill() }
        #expect(await watch.waitForOutput(containing: "watching"), "\(watch.output)")
        let hostile = "Eve\u{1B}[31mRED\nfake line\u{202E}txt.exe"
        let uuid = try await app.reportIncoming("eve\u{1B}[2J", update: [Telephony1.Key.localizedCallerName: .string(hostile)])
        #expect(await watch.waitForOutput(containing: "call \(uuid)"), "\(watch.output)")
        let calls = try await daemon.cli("calls")
        #expect(calls.stdout.contains("\(uuid)\tringing"), "\(calls.stdout)")
        #expect(try await daemon.cli("decline", uuid).status == 0)
        try await app.perform("end")

        let recents = try await daemon.cli("recents")
        #expect(await watch.waitForOutput(containing: "ended"), "\(watch.output)")
        for (command, output) in [("calls", calls.stdout), ("recents", recents.stdout), ("watch", watch.output), ("status", try await daemon.cli("status").stdout)] {
            #expect(!output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" }, "\(command): \(output.debugDescription)")
            #expect(!output.contains("\nfake line"), "\(command): \(output.debugDescription)")
        }
        #expect(recents.stdout.contains("Eve [31mRED fake linetxt.exe"), "\(recents.stdout.debugDescription)")
    }

    // MARK: Item 8: JSON and watch

    @Test("every listing prints one JSON document with --json")
    func jsonDocuments() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        #expect(try await daemon.cli("favorites", "add", "Mum", "+15559876", "--provider", "Monkey").status == 0)
        #expect(try await daemon.cli("block", "add", "+1900*").status == 0)
        let file = daemon.bus.directory.appendingPathComponent("directory.txt")
        try "14085559999,Pizza Place\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try await daemon.cli("directory", "load", "--provider", "Monkey", file.path).status == 0)

        for command in [["calls"], ["providers"], ["recents"], ["favorites"], ["directory"], ["block", "list"]] {
            let result = try await daemon.cli(command + ["--json"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let document = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
            #expect(document is [Any], "\(command) --json: \(result.stdout)")
        }
        let calls = try #require(try JSONSerialization.jsonObject(with: Data(try await daemon.cli("calls", "--json").stdout.utf8)) as? [[String: Any]])
        #expect(calls.first?["UUID"] as? String == uuid && calls.first?["State"] as? String == "ringing")
        let providers = try #require(try JSONSerialization.jsonObject(with: Data(try await daemon.cli("providers", "--json").stdout.utf8)) as? [[String: Any]])
        #expect(providers.map { $0["Name"] as? String } == ["Monkey"])
    }

    @Test("watch: a first snapshot, one readable line per change, the call's UUID on changes, the service going and coming back")
    func watch() async throws {
        let bus = try await PrivateBus.start()
        var daemon: RunningDaemon? = try await RunningDaemon(bus: bus)
        let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice", update: [Telephony1.Key.localizedCallerName: .string("Alice")])

        let text = try ChildProcess(Self.monkeycall, ["watch"], environment: bus.environment)
        let json = try ChildProcess(Self.monkeycall, ["watch", "--json"], environment: bus.environment)
        defer { text.kill(); json.kill() }
        #expect(await text.waitForOutput(containing: "watching"), "\(text.output)")
        #expect(await json.waitForOutput(containing: "watching"), "\(json.output)")
        // The snapshot: what was there before watch started.
        #expect(text.output.contains("provider Monkey registered"), "\(text.output)")
        #expect(text.output.contains("call \(uuid) ringing incoming alice (Alice) via Monkey"), "\(text.output)")
        #expect(json.output.contains(#""UUID":"\#(uuid)""#) && json.output.contains(#""event":"added""#), "\(json.output)")

        #expect(try await daemon!.cli("answer", uuid).status == 0)
        try await app.perform("answer")
        #expect(await text.waitForOutput(containing: "call \(uuid) changed: "), "\(text.output)")
        #expect(await text.waitForOutput(containing: "State active"), "\(text.output)")
        // Each JSON line is an object; changed events name the call by its UUID.
        #expect(await json.waitForOutput(containing: #""State":"active""#), "\(json.output)")
        let changed = json.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "changed" && $0["State"] as? String == "active" }
        #expect(changed.first?["UUID"] as? String == uuid, "\(json.output)")
        #expect(!text.output.contains("\"active\"") && !text.output.contains("variant"), "no raw D-Bus values: \(text.output)")

        daemon?.daemon.terminate()
        #expect(await text.waitForOutput(containing: "service stopped"), "\(text.output)")
        #expect(await json.waitForOutput(containing: #"{"event":"service-stopped"}"#), "\(json.output)")
        daemon = nil
        let second = try await RunningDaemon(bus: bus)
        #expect(await text.waitForOutput(containing: "service started"), "\(text.output)")
        #expect(await json.waitForOutput(containing: #"{"event":"service-started"}"#), "\(json.output)")
        _ = try await TestProvider(bus: bus, name: "Banana", configuration: [:])
        #expect(await text.waitForOutput(containing: "provider Banana registered"), "\(text.output)")
        _ = second
    }

    // MARK: Item 9: choosing

    @Test("several calls: the error lists UUID, caller and app; same-named providers are told apart and never picked silently")
    func choosing() async throws {
        let daemon = try await RunningDaemon()
        let first = try await TestProvider(bus: daemon.bus, name: "Phone", configuration: [:])
        let second = try await TestProvider(bus: daemon.bus, name: "Phone", configuration: [:])
        let one = try await first.reportIncoming("alice", update: [Telephony1.Key.localizedCallerName: .string("Alice")])
        let two = try await second.reportIncoming("bob")
        let answer = try await daemon.cli("answer")
        #expect(answer.status != 0)
        #expect(answer.stderr.contains("there are 2 calls to answer; name one"), "\(answer.stderr)")
        #expect(answer.stderr.contains("\(one)  alice (Alice)  Phone") && answer.stderr.contains("\(two)  bob  Phone"), "\(answer.stderr)")
        for uuid in [one, two] { #expect(try await daemon.cli("decline", uuid).status == 0) }

        // A namesake with a desktop entry is named by it.
        let third = try await TestProvider(bus: daemon.bus, name: "Phone", configuration: [Telephony1.Key.desktopEntry: .string("org.example.Phone")])
        let providers = try await daemon.cli("providers")
        #expect(providers.stdout.contains("Phone #1\tPhone") && providers.stdout.contains("Phone #2\tPhone")
                && providers.stdout.contains("Phone (org.example.Phone)\tPhone"), "\(providers.stdout)")
        let unnamed = try await daemon.cli("dial", "carol")
        #expect(unnamed.status != 0 && unnamed.stderr.contains("3 providers can place a call")
                && unnamed.stderr.contains("--provider: Phone #1, Phone #2, Phone (org.example.Phone)"), "\(unnamed.stderr)")
        let ambiguous = try await daemon.cli("dial", "carol", "--provider", "Phone")
        #expect(ambiguous.status != 0 && ambiguous.stderr.contains("3 providers are named 'Phone'"), "\(ambiguous.stderr)")
        let chosen = try await daemon.cli("dial", "carol", "--provider", "Phone #2")
        #expect(chosen.status == 0, "\(chosen.stderr)")
        let start = try #require(await second.nextAction("start"))
        #expect(start.args["Handle"] == .string("carol"))
        try await second.call("FailAction", [.string(start.id), .vardict([:])])
        #expect(try await daemon.cli("dial", "dave", "--provider", "Phone (org.example.Phone)").status == 0)
        #expect(await third.nextAction("start")?.args["Handle"] == .string("dave"))
    }

    @Test("show: no call, an unknown call and no Phone app installed each say what is wrong")
    func showWithoutPhone() async throws {
        let daemon = try await RunningDaemon()
        let none = try await daemon.cli("show")
        #expect(none.status != 0 && none.stderr.contains("there is no call to show"), "\(none.stderr)")
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        let unknown = try await daemon.cli("show", "0f0e0d0c-0b0a-4908-8706-050403020100")
        #expect(unknown.status != 0 && unknown.stderr.contains("there is no call 0f0e0d0c-0b0a-4908-8706-050403020100"), "\(unknown.stderr)")
        // This test bus can start no Phone app.
        let shown = try await daemon.cli("show", uuid)
        #expect(shown.status != 0 && shown.stderr.contains("the Phone app (org.monkeycall.Phone) is not installed"), "\(shown.stderr)")
    }

    // MARK: Item 10: bad input

    @Test("bad input is refused with what is wrong, and nothing is stored")
    func badInput() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [
            Telephony1.Key.urlSchemes: .array(element: "s", [.string("monkeycall")]),
            Telephony1.Key.supportedHandleTypes: .array(element: "s", [.string("generic")]),
        ])

        let unknownApp = try await daemon.cli("favorites", "add", "Mum", "+15559876", "--provider", "NoSuchApp")
        #expect(unknownApp.status != 0 && unknownApp.stderr.contains("no app named 'NoSuchApp'") && unknownApp.stderr.contains("Monkey"), "\(unknownApp.stderr)")
        #expect(try await daemon.cli("favorites").stdout.isEmpty)
        #expect(try await daemon.cli("favorites", "add", "Mum", "+15559876", "--provider", "Monkey").status == 0)
        let duplicate = try await daemon.cli("favorites", "add", "Mother", "+15559876", "--provider", "Monkey")
        #expect(duplicate.status != 0 && duplicate.stderr.contains("already a favorite"), "\(duplicate.stderr)")
        #expect(try await daemon.cli("favorites").stdout.split(separator: "\n").count == 1)

        let star = try await daemon.cli("block", "add", "+1*5")
        #expect(star.status != 0 && star.stderr.contains("+44*"), "\(star.stderr)")
        #expect(try await daemon.cli("block", "list").stdout.isEmpty)
        let notBlocked = try await daemon.cli("block", "remove", "+15550000")
        #expect(notBlocked.status != 0 && notBlocked.stderr.contains("is not blocked"), "\(notBlocked.stderr)")

        let file = daemon.bus.directory.appendingPathComponent("directory.txt")
        try "14085559999,Pizza Place\n".write(to: file, atomically: true, encoding: .utf8)
        let noSuchDirectory = try await daemon.cli("directory", "load", "--provider", "NoSuchApp", file.path)
        #expect(noSuchDirectory.status != 0 && noSuchDirectory.stderr.contains("no app named 'NoSuchApp'"), "\(noSuchDirectory.stderr)")
        #expect(try await daemon.cli("directory").stdout.isEmpty)
        let missing = try await daemon.cli("directory", "load", "--provider", "Monkey", "/nonexistent/list.txt")
        #expect(missing.stderr.contains("cannot read /nonexistent/list.txt: No such file or directory"), "\(missing.stderr)")

        let limit = try await daemon.cli("recents", "--limit", "-1")
        #expect(limit.status != 0 && limit.stderr.contains("--limit must be a whole number from 1, not -1"), "\(limit.stderr)")

        let email = try await daemon.cli("dial", "carol@example.com", "--handle-type", "email-address")
        #expect(email.status != 0 && email.stderr.contains("an email-address handle"), "\(email.stderr)")

        // A link with an empty host calls the name, not "/alice".
        let notifications = try await NotificationServer(address: daemon.bus.address)
        let link = try await daemon.cli("open", "monkeycall:///alice")
        #expect(link.status == 0, "\(link.stderr)")
        try await notifications.confirmLink()
        let start = try #require(await app.nextAction("start"))
        #expect(start.args["Handle"] == .string("alice"))
        try await app.call("FailAction", [.string(start.id), .vardict([:])])
    }

    @Test("dial refuses a handle with control or bidi characters before it sends anything, naming the character; the app is never asked to dial it (issue 53)")
    func dialRefusesDressedHandles() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        for handle in ["\u{1B}[31m+1900555\t0100\u{202E}", "+1900555\u{200F}0100", "+1900555\u{2067}0100\u{2069}"] {
            let run = try await daemon.cli("dial", handle)
            #expect(run.status != 0 && run.stderr.contains("the handle contains U+"), "\(handle.debugDescription): \(run.stderr)")
            #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{202E}"), "the error repeats the characters: \(run.stderr.debugDescription)")
        }
        // Refused before it connects: on a bus with nothing on it, the error is about the handle.
        let nowhere = try await ChildProcess.run(BuiltProducts.path("monkeycall"), ["--address", "unix:path=/nonexistent/bus", "dial", "+1900555\t0100"])
        #expect(nowhere.status != 0 && nowhere.stderr.contains("the handle contains U+0009"), "\(nowhere.stderr)")
        #expect(await app.nextAction("start", timeout: .seconds(1)) == nil, "the app was asked to dial a dressed handle")
        let clean = try await daemon.cli("dial", "+1 900 555 0100")
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try #require(await app.nextAction("start")).args["Handle"] == .string("+1 900 555 0100"))
    }

    @Test("directory remove APP deletes the app's directory, for good; removing what is not there says so")
    func directoryRemove() async throws {
        let bus = try await PrivateBus.start()
        let daemon = try await RunningDaemon(bus: bus)
        let app = try await TestProvider(bus: bus, name: "Pizza", configuration: [:])
        let file = bus.directory.appendingPathComponent("directory.txt")
        try "14085559999,Pizza Place\n14085550001\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try await daemon.cli("directory", "load", "--provider", "Pizza", file.path).status == 0)
        #expect(try await daemon.cli("identify", "+1 408 555 9999").stdout.contains("Pizza Place"))

        let removed = try await daemon.cli("directory", "remove", "Pizza")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await daemon.cli("directory").stdout.isEmpty)
        #expect(try await daemon.cli("identify", "+1 408 555 9999").stdout.contains("unknown caller"))
        let again = try await daemon.cli("directory", "remove", "Pizza")
        #expect(again.status != 0 && again.stderr.contains("There is no call directory of Pizza"), "\(again.stderr)")

        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0)
        let restarted = try await RunningDaemon(bus: bus)
        #expect(try await restarted.cli("directory").stdout.isEmpty)
        _ = app
    }

    @Test("recents clear asks on a terminal; n keeps them, --yes does not ask")
    func clearAsks() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        try await app.call("ReportCallEnded", [.string(uuid), .string("unanswered"), .uint64(0)])
        #expect(try await daemon.cli("recents").stdout.contains("alice"))

        let kept = try await Self.onTerminal(["recents", "clear"], input: "n\n", environment: daemon.bus.environment)
        #expect(kept.status != 0 && kept.output.contains("Forget every recent call? [y/N]") && kept.output.contains("kept"), "\(kept.output)")
        #expect(try await daemon.cli("recents").stdout.contains("alice"))
        let cleared = try await Self.onTerminal(["recents", "clear", "--yes"], environment: daemon.bus.environment)
        #expect(cleared.status == 0 && !cleared.output.contains("[y/N]"), "\(cleared.output)")
        #expect(try await daemon.cli("recents").stdout.isEmpty)
    }

    // MARK: Item 11: version, words, completions

    @Test("--version for both programs, and for the monkeycall program started by each name it is installed as; dnd names the words it takes; bash completes subcommands, on/off, live call UUIDs and provider names")
    func versionAndCompletions() async throws {
        let daemon = try await RunningDaemon()
        for program in ["monkeycall", "monkeycalld"] {
            let version = try await daemon.run(BuiltProducts.path(program), ["--version"])
            #expect(version.status == 0 && version.stdout == Release.description(of: program) + "\n", "\(version.stdout)\(version.stderr)")
        }
        // One program, three names, as installed: the name it was started by picks which.
        let links = daemon.bus.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        for program in ["monkeycalld", "monkeycall-baresip", "monkeycall"] {
            try FileManager.default.createSymbolicLink(atPath: links.appendingPathComponent(program).path, withDestinationPath: BuiltProducts.path("monkeycall"))
            let version = try await daemon.run(links.appendingPathComponent(program).path, ["--version"])
            #expect(version.status == 0 && version.stdout == Release.description(of: program) + "\n", "\(program): \(version.stdout)\(version.stderr)")
        }
        let maybe = try await daemon.cli("dnd", "maybe")
        #expect(maybe.status != 0 && maybe.stderr.contains("'on', 'off', 'status', 'allow' or 'disallow'"), "\(maybe.stderr)")

        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        func complete(_ line: String) async throws -> [String] {
            // What bash does on Tab: the words so far, then our completion function with (command, word, word before).
            let script = """
                source <(\(Self.shellQuoted(Self.monkeycall)) --generate-completion-script bash)
                COMP_LINE=\(Self.shellQuoted(Self.monkeycall + " " + line)); COMP_POINT=${#COMP_LINE}
                read -ra COMP_WORDS <<< "$COMP_LINE"; [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                _monkeycall "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try await daemon.run("/bin/bash", ["-c", script])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let subcommands = try await complete("")
        #expect(["calls", "dial", "answer", "watch", "directory"].allSatisfy(subcommands.contains), "\(subcommands)")
        #expect(try await complete("dnd ").sorted() == ["allow", "disallow", "off", "on", "status"])
        #expect(try await complete("answer ") == [uuid])
        #expect(try await complete("dial bob --provider ") == ["Monkey"])
    }
}

extension RunningDaemon {
    func cli(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await run(BuiltProducts.path("monkeycall"), arguments)
    }
}
