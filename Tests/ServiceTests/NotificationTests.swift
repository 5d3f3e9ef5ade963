import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// monkeycalld rings through real libnotify to a notification server on the test bus.
@Suite("Incoming-call notifications")
struct NotificationTests {
    static func provider(_ daemon: RunningDaemon, _ configuration: [String: DBusValue] = [:]) async throws -> TestProvider {
        try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: configuration)
    }

    /// Runs `body` with a notification server on a daemon's bus and a provider named `name`:
    /// the server comes first, so the daemon rings through it from the first call.
    static func ringing(_ daemonArguments: [String] = [], name: String = "Monkey", configuration: [String: DBusValue] = [:],
                        _ body: (NotificationServer, TestProvider) async throws -> Void) async throws {
        let daemon = try await RunningDaemon(daemonArguments)
        defer { withExtendedLifetime(daemon) {} }
        let server = try await NotificationServer(address: daemon.bus.address)
        try await body(server, try await TestProvider(bus: daemon.bus, name: name, configuration: configuration))
    }

    /// Alice calls and is answered on the notification (without the call controls): Answer reaches
    /// the app for her call, and the notification closes. Returns her call's UUID.
    @discardableResult
    static func answerOnNotification(_ server: NotificationServer, _ app: TestProvider,
                                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let uuid = try await app.reportIncoming("alice")
        let shown = try #require(await server.notified.next(), sourceLocation: sourceLocation)
        try server.invoke(shown.id, "answer")
        let answer = try #require(await app.nextAction("answer"), sourceLocation: sourceLocation)
        #expect(answer.call == uuid, sourceLocation: sourceLocation)
        try await app.fulfill(answer)
        #expect(await server.closed.next() == shown.id, sourceLocation: sourceLocation)
        return uuid
    }

    static func actionIDs(_ notification: NotificationServer.Notification) -> [String] {
        stride(from: 0, to: notification.actions.count, by: 2).map { notification.actions[$0] }
    }

    @Test("a ringing call: exact Notify arguments, hints and actions; escaped caller text")
    func ringingNotification() async throws {
        try await Self.ringing(configuration: ["DesktopEntry": .string("org.example.Monkey"), "IconName": .string("call-start")]) { server, app in
            try await app.reportIncoming("alice", update: ["LocalizedCallerName": .string("<b>&\"'")])
            let shown = try #require(await server.notified.next())
            #expect(shown.appName == "Monkey")
            #expect(shown.summary == "Incoming call")
            #expect(shown.body == "&lt;b&gt;&amp;&quot;&apos;\nalice")
            #expect(shown.icon == "call-start")
            // The service rings itself: Silence stops it, and the server plays no sound of its own.
            #expect(shown.actions == ["answer", "Answer", "decline", "Decline", "silence", "Silence", "default", "Open Monkey"])
            #expect(shown.timeout == 0)
            #expect(shown.hints["category"] == .string("call.incoming"))
            #expect(shown.hints["urgency"] == .byte(2))
            #expect(shown.hints["resident"] == .bool(true))
            // No sound of the server's own: GNOME Shell 43 reads no suppress-sound and would play it.
            #expect(shown.hints["sound-name"] == nil && shown.hints["sound-file"] == nil)
            #expect(shown.hints["suppress-sound"] == .bool(true))
            #expect(shown.hints["desktop-entry"] == .string("org.example.Monkey"))

            try await app.reportIncoming("bob", update: ["HasVideo": .bool(true)])
            #expect(await server.notified.next()?.summary == "Incoming video call")
        }
    }

    @Test("caller text reaches the screen cleaned: no fused markup, no fake lines, no escape sequences or bidi overrides")
    func hostileCallerText() async throws {
        try await Self.ringing(name: "Monkey\u{202E}") { server, app in
            // "\u{0D4E}<" is one grapheme cluster: escaping per Character let this "<b>" through as markup.
            try await app.reportIncoming("+1\u{2066}555\n0123", update: ["LocalizedCallerName": .string("\u{0D4E}<b>\u{301}x\nFake line\u{1B}[2J")])
            let shown = try #require(await server.notified.next())
            #expect(shown.body == "\u{0D4E}&lt;b&gt;\u{301}x Fake line [2J\n+1555 0123")
            #expect(shown.appName == "Monkey")
            #expect(!shown.body.unicodeScalars.contains("<"))
        }
    }

    /// A 1×1 red PNG.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41,
        0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF, 0xC0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00,
        0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]

    @Test("the provider's IconData goes out as image-data; a ringtone path as sound-file when the notification server plays it")
    func iconDataAndRingtone() async throws {
        try await Self.ringing(["--no-ringtone"], configuration: ["IconData": Self.png.dbusValue, "RingtoneSound": .string("/usr/share/sounds/ring.oga")]) { server, app in
            try await app.reportIncoming("alice")
            let shown = try #require(await server.notified.next())
            guard case .structure(let image)? = shown.hints["image-data"] else { Issue.record("no image-data: \(shown.hints.keys.sorted())"); return }
            #expect(Array(image.prefix(2)) == [.int32(1), .int32(1)])
            #expect(shown.hints["sound-file"] == .string("/usr/share/sounds/ring.oga"))
            #expect(shown.hints["sound-name"] == nil)
        }
    }

    @Test("Answer on the notification answers the call; the notification closes")
    func answerFromNotification() async throws {
        // Without the call controls, which would take the notification over in place.
        try await Self.ringing(["--no-call-controls"]) { server, app in
            try await Self.answerOnNotification(server, app)
        }
    }

    @Test("a second call while one is active offers Hold & Answer and End & Answer; End & Answer ends the first")
    func secondCall() async throws {
        try await Self.ringing(["--no-call-controls"]) { server, app in
            let first = try await Self.answerOnNotification(server, app)

            let second = try await app.reportIncoming("bob")
            let shown = try #require(await server.notified.next())
            // What matters while a call is up first (GNOME Shell draws 3 buttons).
            #expect(Self.actionIDs(shown) == ["hold-and-answer", "end-and-answer", "decline", "silence", "answer", "default"])
            try server.invoke(shown.id, "end-and-answer")
            let end = try #require(await app.nextAction("end"))
            #expect(end.call == first)
            let answer = try #require(await app.nextAction("answer"))
            #expect(answer.call == second)
        }
    }

    @Test("a changed caller name replaces the notification in place")
    func replacedInPlace() async throws {
        try await Self.ringing { server, app in
            let uuid = try await app.reportIncoming("alice")
            let first = try #require(await server.notified.next())
            try await app.call("ReportCallUpdated", [.string(uuid), .vardict(["LocalizedCallerName": .string("Alice Liddell")])])
            let second = try #require(await server.notified.next())
            #expect(second.replacesID == first.id)
            #expect(second.body == "Alice Liddell\nalice")
        }
    }

    @Test("an unanswered call leaves a Missed call notification whose Call back starts a call")
    func missedCall() async throws {
        try await Self.ringing(["--ring-timeout", "0.5"]) { server, app in
            let uuid = try await app.reportIncoming("alice")
            let ringing = try #require(await server.notified.next())
            try await app.perform("end")
            #expect(await server.closed.next() == ringing.id)
            let missed = try #require(await server.notified.next())
            #expect(missed.summary == "Missed call")
            #expect(missed.hints["category"] == .string("call.unanswered"))
            #expect(missed.actions == ["call-back", "Call back"])
            try server.invoke(missed.id, "call-back")
            let start = try #require(await app.nextAction("start"))
            #expect(start.args["Handle"] == .string("alice"))
            #expect(start.call != uuid)
        }
    }

    @Test("no notification server: calls work and one warning is logged; a server that appears later rings, as that server draws")
    func serverComesLater() async throws {
        let daemon = try await RunningDaemon()
        let app = try await Self.provider(daemon)
        let early = try await app.reportIncoming("alice")
        _ = try await app.reportIncoming("bob")
        #expect(await daemon.daemon.waitForOutput(containing: "cannot show notifications"))
        let answer = try await daemon.cli("answer", early)
        #expect(answer.status == 0, "\(answer.stderr)")
        try await app.perform("answer")
        #expect(daemon.daemon.output.components(separatedBy: "cannot show notifications").count == 2, "one warning only")

        // dunst draws no app name: the daemon asks the new server what it is (not what the empty
        // bus answered before) and names the app in the body.
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "dunst")
        let shown = try #require(await server.notified.next { $0.body.hasPrefix("bob") })
        #expect(shown.body == "bob\nMonkey")
        // One notification for bob's call: a later carol is shown after anything posted for bob
        // (the notifier keeps order), and every Notify for bob since replaced the first in place.
        _ = try await app.reportIncoming("carol")
        _ = try #require(await server.notified.next { $0.body.hasPrefix("carol") })
        let bobs = server.notified.all.filter { $0.body.hasPrefix("bob") }
        #expect(bobs.dropFirst().allSatisfy { $0.replacesID == shown.id }, "\(bobs.map { ($0.id, $0.replacesID, $0.body) })")

        // The server crashes mid-ring: the daemon carries on.
        server.stop()
        let status = try await daemon.cli("calls")
        #expect(status.status == 0 && status.stdout.contains("ringing"))
    }

    @Test("a hung notification server: the notifications waiting for it stay bounded (the oldest dropped, said once), calls go on")
    func hungServerBounded() async throws {
        // 300 actions in a row on a machine busy with the whole suite: none may time out meanwhile
        // (what is measured here is the notifications' backlog, not the app's speed).
        let daemon = try await RunningDaemon(["--incoming-call-rate", "0", "--action-timeout", "120"])
        let server = try await NotificationServer(address: daemon.bus.address, hangs: true)
        let app = try await Self.provider(daemon)
        // libnotify waits 25 s for the first Notify; every other notification waits behind it,
        // among them each call's "Call ended" under a key of its own.
        func control(_ member: String, _ uuid: String) async throws {
            try await app.connection.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                          interface: Telephony1.CallController.interface, member: member, [.string(uuid)])
        }
        for index in 0..<150 {
            let uuid = try await app.reportIncoming("caller\(index)")
            try await control("AnswerCall", uuid)
            try await app.perform("answer")
            try await control("EndCall", uuid)
            try await app.perform("end")
        }
        #expect(await daemon.daemon.waitForOutput(containing: "notifications fall behind"), "\(daemon.daemon.output.suffix(3000))")
        #expect(await server.notified.next() != nil, "the first Notify reached the server")
        let last = try await app.reportIncoming("last caller")
        let calls = try await daemon.cli("calls")
        #expect(calls.status == 0 && calls.stdout.contains(last))
        #expect(daemon.daemon.output.components(separatedBy: "notifications fall behind").count == 2, "said once")
    }
}
