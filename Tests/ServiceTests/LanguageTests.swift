import DBus
import DBusTestSupport
import Foundation
import Localization
import MonkeyCallAPI
import Testing

/// The user's language: the real daemon and CLI started with a session's `LANG`, their catalogs
/// compiled from `po/` by the real msgfmt, read back as a person sees them (the notification
/// server's summary, body and buttons; the terminal's error line).
@Suite("The user's language")
struct LanguageTests {
    /// What a person reads in one language; `clock` matches a time of day as that language writes it.
    struct Language: Sendable, CustomTestStringConvertible {
        let locale: String
        let incomingCall: String
        let answer: String
        let decline: String
        let silence: String
        /// "1 more incoming call", "2 more incoming calls".
        let moreCalls: (one: String, two: String)
        /// The ongoing call's "since 14:02" line, a regular expression.
        let since: String
        /// "Call bob with Monkey?"
        let linkQuestion: String
        /// `monkeycall block remove xyz` on an empty block list.
        let notBlocked: String

        var testDescription: String { locale }
    }

    static let languages: [Language] = [
        Language(locale: "de_DE.UTF-8", incomingCall: "Eingehender Anruf", answer: "Annehmen", decline: "Ablehnen", silence: "Klingelton aus",
                 moreCalls: ("1 weiterer eingehender Anruf", "2 weitere eingehende Anrufe"), since: #"seit \d\d:\d\d Uhr"#,
                 linkQuestion: "bob mit Monkey anrufen?", notBlocked: "Fehler: „xyz“ ist nicht blockiert; blockiert: nichts"),
        Language(locale: "pt_BR.UTF-8", incomingCall: "Chamada recebida", answer: "Atender", decline: "Recusar", silence: "Silenciar toque",
                 moreCalls: ("Mais 1 chamada recebida", "Mais 2 chamadas recebidas"), since: #"desde \d\d:\d\d"#,
                 linkQuestion: "Ligar para bob usando Monkey?", notBlocked: "Erro: “xyz” não está bloqueado; bloqueados: nada"),
        // Japanese and Korean have one plural form.
        Language(locale: "ja_JP.UTF-8", incomingCall: "着信", answer: "応答", decline: "拒否", silence: "消音",
                 moreCalls: ("ほかに1件の着信", "ほかに2件の着信"), since: #"\d\d:\d\dから"#,
                 linkQuestion: "Monkeyでbobに発信しますか？", notBlocked: "エラー: 「xyz」はブロックされていません。ブロック中: なし"),
        Language(locale: "ko_KR.UTF-8", incomingCall: "수신 전화", answer: "받기", decline: "거절", silence: "무음",
                 moreCalls: ("수신 전화 1건 더", "수신 전화 2건 더"), since: #"(?:오전|오후) \d{1,2}:\d\d부터"#,
                 linkQuestion: "Monkey 앱으로 bob에 전화를 걸까요?", notBlocked: "오류: ‘xyz’은(는) 차단되어 있지 않습니다. 차단됨: 없음"),
        // A language MonkeyCall has no catalog for, and a locale the system does not have: English.
        Language(locale: "fr_FR.UTF-8", incomingCall: "Incoming call", answer: "Answer", decline: "Decline", silence: "Silence",
                 moreCalls: ("1 more incoming call", "2 more incoming calls"), since: #"since \d\d:\d\d"#,
                 linkQuestion: "Call bob with Monkey?", notBlocked: "Error: 'xyz' is not blocked; blocked: nothing"),
        Language(locale: "xx_YY.UTF-8", incomingCall: "Incoming call", answer: "Answer", decline: "Decline", silence: "Silence",
                 moreCalls: ("1 more incoming call", "2 more incoming calls"), since: #"since \d\d:\d\d"#,
                 linkQuestion: "Call bob with Monkey?", notBlocked: "Error: 'xyz' is not blocked; blocked: nothing"),
    ]

    /// The label of `action` on `notification` (actions come as id, label, id, label…).
    static func label(_ action: String, on notification: NotificationServer.Notification) -> String? {
        stride(from: 0, to: notification.actions.count - 1, by: 2).first { notification.actions[$0] == action }.map { notification.actions[$0 + 1] }
    }

    @Test("a ringing call, its buttons, a plural, a time: in the session's language", arguments: languages)
    func ringing(_ language: Language) async throws {
        let daemon = try await RunningDaemon(environment: ["LANG": language.locale])
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "gnome-shell", serverVersion: "46.2")
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])

        // Caller text is the caller's: never translated.
        let uuid = try await app.reportIncoming("+14085550142", update: ["LocalizedCallerName": .string("Ada Lovelace")])
        let ringing = try #require(await server.notified.next())
        #expect(ringing.summary == language.incomingCall)
        // GNOME Shell 46 draws the body as one line: one line it is.
        #expect(ringing.body == "Ada Lovelace · +14085550142")
        #expect(Self.label("answer", on: ringing) == language.answer)
        #expect(Self.label("decline", on: ringing) == language.decline)
        #expect(Self.label("silence", on: ringing) == language.silence)

        // Three ring on screen; the fourth and fifth are counted.
        for handle in ["b", "c", "d"] { try await app.reportIncoming(handle) }
        #expect(await server.notified.next { $0.summary == language.moreCalls.one } != nil, "no \(language.moreCalls.one)")
        try await app.reportIncoming("e")
        #expect(await server.notified.next { $0.summary == language.moreCalls.two } != nil, "no \(language.moreCalls.two)")

        // Answered: the ongoing card says since when, in the language's form.
        try server.invoke(ringing.id, "answer")
        #expect(try await app.perform("answer").call == uuid)
        let ongoing = try #require(await server.notified.next { $0.body.hasPrefix("+14085550142 · ") && $0.actions.contains("hang-up") })
        #expect(ongoing.body.contains(try Regex(language.since)), "\(ongoing.body)")
    }

    @Test("a link's question and a CLI error: in the session's language", arguments: languages)
    func linkAndCLI(_ language: Language) async throws {
        let daemon = try await RunningDaemon(environment: ["LANG": language.locale])
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "gnome-shell", serverVersion: "46.2")
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        defer { withExtendedLifetime(app) {} } // registered until the test ends
        let opened = try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                              Telephony1.Manager.interface, Telephony1.Manager.openURL.name, "s", "monkeycall://bob"])
        #expect(opened.status == 0, "\(opened.stdout) \(opened.stderr)")
        let question = try #require(await server.notified.next())
        #expect(question.summary == language.linkQuestion)

        var environment = daemon.bus.environment
        environment["LANG"] = language.locale
        let unblock = try await ChildProcess.run(BuiltProducts.path("monkeycall"), ["block", "remove", "xyz"], environment: environment)
        #expect(unblock.status == 1)
        #expect(unblock.stderr.trimmingCharacters(in: .newlines) == language.notBlocked)
    }

    @Test("LANGUAGE comes first, as gettext orders the variables; LC_ALL over LANG")
    func variablesInGettextsOrder() async throws {
        let daemon = try await RunningDaemon()
        var environment = daemon.bus.environment
        for (variables, expected) in [(["LANG": "de_DE.UTF-8", "LANGUAGE": "ja:de"], "エラー: 「xyz」"),
                                      (["LANG": "ja_JP.UTF-8", "LC_ALL": "ko_KR.UTF-8"], "오류: ‘xyz’"),
                                      (["LANG": "C", "LANGUAGE": "de"], "Error: 'xyz'")] {  // gettext ignores LANGUAGE in the C locale
            environment.merge(variables) { $1 }
            let unblock = try await ChildProcess.run(BuiltProducts.path("monkeycall"), ["block", "remove", "xyz"], environment: environment)
            #expect(unblock.stderr.hasPrefix(expected), "\(variables): \(unblock.stderr)")
            for name in variables.keys { environment[name] = nil }
        }
    }

    /// A text that came through gettext in the pseudo language: ⟦ … ⟧.
    static func bracketed(_ text: String) -> Bool { text.hasPrefix("⟦") && text.hasSuffix("⟧") }

    @Test("every text the service and the CLI show a person comes through gettext: in a catalog that brackets each message, none is left bare")
    func nothingBypassesGettext() async throws {
        let pseudo = ["LANG": "en_US.UTF-8", "LANGUAGE": Catalogs.pseudoLanguage]
        let daemon = try await RunningDaemon(environment: pseudo)
        // dunst draws no app name: the service adds it to the body, where it is the app's own text.
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "dunst")
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: ["URLSchemes": ["monkeycall"].dbusValue])
        // The callers' and the apps' own words, and MonkeyCall's name: never translated.
        let callersText: Set<String> = ["Ada Lovelace", "+14085550142", "b", "c", "d", "bob", "Monkey", "MonkeyCall"]
        var seen: [NotificationServer.Notification] = []
        func check(_ notification: NotificationServer.Notification?) {
            guard let notification else { Issue.record("a notification did not come"); return }
            seen.append(notification)
            #expect(Self.bracketed(notification.summary), "summary: \(notification.summary)")
            for line in notification.body.split(separator: "\n").map(String.init) where !callersText.contains(line) {
                #expect(Self.bracketed(line), "\(notification.summary): body line \(line)")
            }
            for label in stride(from: 1, to: notification.actions.count, by: 2).map({ notification.actions[$0] }) {
                #expect(Self.bracketed(label), "\(notification.summary): button \(label)")
            }
        }

        let uuid = try await app.reportIncoming("+14085550142", update: ["LocalizedCallerName": .string("Ada Lovelace")])
        let ringing = try #require(await server.notified.next())
        check(ringing)
        for handle in ["b", "c", "d"] { try await app.reportIncoming(handle) }
        check(await server.notified.next { $0.appName == "MonkeyCall" })
        try server.invoke(ringing.id, "answer")
        #expect(try await app.perform("answer").call == uuid)
        let ongoing = await server.notified.next { $0.actions.contains("hang-up") }
        check(ongoing)
        try server.invoke(try #require(ongoing).id, "mute")
        _ = try await app.perform("set-muted")
        check(await server.notified.next { $0.actions.contains("unmute") })
        try server.invoke(try #require(ongoing).id, "hang-up")
        _ = try await app.perform("end")
        check(await server.notified.next { $0.hints["category"] == .string("call.ended") })

        _ = try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "call", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                     Telephony1.Manager.interface, Telephony1.Manager.openURL.name, "s", "monkeycall://bob"])
        check(await server.notified.next { $0.actions.contains("call") })
        #expect(seen.count == 6)

        var environment = daemon.bus.environment
        environment.merge(pseudo) { $1 }
        for arguments in [["status"], ["favorites"], ["block", "remove", "xyz"], ["dnd"], ["identify", "+14085550199"]] {
            let run = try await ChildProcess.run(BuiltProducts.path("monkeycall"), arguments, environment: environment)
            for line in (run.stdout + run.stderr).split(separator: "\n").map(String.init) {
                #expect(Self.bracketed(line), "monkeycall \(arguments.joined(separator: " ")): \(line)")
            }
        }
    }

    @Test("the template is current (a text added or changed without scripts/update-po fails here), and every catalog complete and valid")
    func catalogsCurrent() async throws {
        let check = try await ChildProcess.run(Catalogs.sources.deletingLastPathComponent().appendingPathComponent("scripts/update-po").path, ["--check"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    @Test("placeholders: numbered ones moved by a translator, in order, %%; a catalog's odd ones left as they are, never a trap")
    func placeholders() {
        #expect(Localization.format("%2$s mit %1$s anrufen?", ["bob", "Monkey"]) == "Monkey mit bob anrufen?")
        #expect(Localization.format("%d more, %s", ["3", "x"]) == "3 more, x")
        #expect(Localization.format("100%% %1$d", ["5"]) == "100% 5")
        #expect(Localization.format("%3$s %0$s %x %", ["a"]) == "%3$s %0$s %x %")
        #expect(Localization.format("%9223372036854775807$s %s", ["a"]) == "%9223372036854775807$s %s")
        #expect(Localization.format("%99999999999999999999$s", []) == "%99999999999999999999$s")
        // Read as bytes: text around the placeholders, in any script, is kept whole.
        #expect(Localization.format("%1$s さんから着信 (%2$s)", ["Zoë", "☎️"]) == "Zoë さんから着信 (☎️)")
        #expect(Localization.format("é%\u{301}s %é %1\u{301}$s 100%", ["x"]) == "é%\u{301}s %é %1\u{301}$s 100%")
        #expect(Localization.format("%s%s%%%1$s%", ["a", "b"]) == "ab%a%")
    }
}
