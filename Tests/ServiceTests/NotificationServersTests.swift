import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// What issue 20 found on real notification servers (dunst, xfce4-notifyd, notification-daemon),
/// against the test notification server.
@Suite("Notifications on real servers")
struct NotificationServersTests {
    @Test("a missed call expires with the server's default (-1) and says when")
    func missedCallExpiresAndSaysWhen() async throws {
        let (daemon, server, app) = try await NotificationRig.start(["--ring-timeout", "0.5"], app: "Monkey", [:])
        defer { withExtendedLifetime(daemon) {} } // the daemon lives until the test ends
        try await app.reportIncoming("alice")
        try await app.perform("end")
        let missed = try #require(await server.notified.next { $0.summary == "Missed call" })
        #expect(missed.timeout == -1)
        #expect(missed.body.wholeMatch(of: /alice\nat \d\d:\d\d/) != nil, "\(missed.body)")
    }

    @Test("a dismissed ringing notification comes back once, silenced; dismissed again it stays away")
    func dismissedOnceComesBack() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", [:])
        let uuid = try await app.reportIncoming("alice")
        let first = try #require(await server.notified.next())
        // The service rings itself: the server plays no sound of its own, and Silence is offered.
        #expect(first.hints["suppress-sound"] == .bool(true) && first.actions.contains("silence"))
        try server.dismiss(first.id)
        let again = try #require(await server.notified.next())
        #expect(again.summary == "Incoming call" && again.hints["suppress-sound"] == .bool(true))
        #expect(again.actions.prefix(4) == ["answer", "Answer", "decline", "Decline"])
        try server.dismiss(again.id)
        // The next notification is another call's: the dismissed call was not posted a third time.
        _ = try await app.reportIncoming("bob")
        let next = try #require(await server.notified.next())
        #expect(next.body == "bob")
        let calls = try await daemon.cli("calls")
        #expect(calls.stdout.contains(uuid) && calls.stdout.contains("ringing"), "the call still rings in its app")
    }

    @Test("a ringing notification's default action answers when the app has no desktop entry")
    func defaultActionAnswers() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", [:])
        defer { withExtendedLifetime(daemon) {} } // the daemon lives until the test ends
        let uuid = try await app.reportIncoming("alice")
        let shown = try #require(await server.notified.next())
        #expect(shown.actions.suffix(2) == ["default", "Answer"])
        try server.invoke(shown.id, "default")
        #expect(await app.nextAction("answer")?.call == uuid)
    }

    @Test("with a desktop entry the default action brings the app forward (DidRequestShowApp) and does not answer")
    func defaultActionShowsApp() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", ["DesktopEntry": .string("org.example.Monkey")])
        let uuid = try await app.reportIncoming("alice")
        let shown = try #require(await server.notified.next())
        #expect(shown.actions.suffix(2) == ["default", "Open Monkey"])
        try server.invoke(shown.id, "default")
        let signal = try #require(await app.signals.next("DidRequestShowApp"))
        #expect(try signal.arguments() == [.string(uuid)])
        #expect(try await daemon.cli("calls").stdout.contains("ringing"))
    }

    @Test("the body does not repeat a handle that is the caller's name")
    func handleNotRepeated() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", [:])
        defer { withExtendedLifetime(daemon) {} } // the daemon lives until the test ends
        try await app.reportIncoming("+1 408 555 0123", update: ["LocalizedCallerName": .string("+1 408 555 0123")])
        #expect(try #require(await server.notified.next()).body == "+1 408 555 0123")
    }

    @Test("servers that draw no app name (xfce4-notifyd, notification-daemon, dunst, GNOME Shell before 46) get it in the body; others do not",
          arguments: [("Xfce Notify Daemon", "0.8.2", true), ("Notification Daemon", "3.20", true), ("dunst", "1.9.0", true), ("gnome-shell", "43.9", true),
                      ("gnome-shell", "46.0", false), ("Plasma", "2.0", false)])
    func appNameWhereNotDrawn(server name: String, version: String, inBody: Bool) async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address, serverName: name, serverVersion: version)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        try await app.reportIncoming("alice")
        let shown = try #require(await server.notified.next())
        #expect(shown.body == (inBody ? "alice\nMonkey" : "alice"), "\(name) \(version): \(shown.body)")
        #expect(shown.appName == "Monkey")
    }

    @Test("GNOME Shell 46 and later draw the body as one line and the app in the header: the body is one line joined with \" · \", naming no app; the ongoing card's too (handle · since HH:MM · muted)",
          arguments: ["46.0", "48.7"])
    func oneLineBodyOnGnome46(version: String) async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "gnome-shell", serverVersion: version)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: ["DesktopEntry": .string("org.example.Monkey")])
        try await app.reportIncoming("+1 408 555 0142", update: ["LocalizedCallerName": .string("Ada Lovelace")])
        let ringing = try #require(await server.notified.next())
        #expect(ringing.body == "Ada Lovelace · +1 408 555 0142", "\(ringing.body)")
        // The header is the app's own (its desktop entry): the summary does not name it again.
        #expect(ringing.summary == "Incoming call" && ringing.hints["desktop-entry"] == .string("org.example.Monkey"))
        try server.invoke(ringing.id, "answer")
        try await app.perform("answer")
        let ongoing = try #require(await server.notified.next { $0.summary == "Call with Ada Lovelace" })
        #expect(ongoing.body.wholeMatch(of: /\+1 408 555 0142 · since \d\d:\d\d/) != nil, "\(ongoing.body)")
    }

    @Test("a handle that only repeats the caller's name in another case (\"Bob\", \"bob\") is shown once, on 43 and on 48; the ongoing card names him once",
          arguments: [("43.9", "Bob\nMonkey"), ("48.7", "Bob")])
    func handleRepeatingNameShownOnce(version: String, body: String) async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "gnome-shell", serverVersion: version)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        try await app.reportIncoming("bob", update: ["LocalizedCallerName": .string("Bob")])
        let ringing = try #require(await server.notified.next())
        #expect(ringing.body == body, "\(version): \(ringing.body)")
        try server.invoke(ringing.id, "answer")
        try await app.perform("answer")
        let ongoing = try #require(await server.notified.next { $0.summary == "Call with Bob" })
        #expect(!ongoing.body.lowercased().contains("bob"), "\(version): \(ongoing.body)")
    }

    @Test("every card carries a desktop-entry: an app without a desktop file gets the Phone app's, when it is installed; then where the header names the Phone app (46+, Plasma) the summary names the calling app (\"Incoming call · Monkey\"), and on 43 the body's last line does",
          arguments: [("gnome-shell", "48.7", "Incoming call · Monkey", "alice"), ("Plasma", "2.0", "Incoming call · Monkey", "alice"),
                      ("gnome-shell", "43.9", "Incoming call", "alice\nMonkey")])
    func phoneAppAsDesktopEntry(server name: String, version: String, summary: String, body: String) async throws {
        let share = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-share-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: share) }
        try writeDesktopFile("\(PhoneApp.appID).desktop", in: share.appendingPathComponent("applications"), name: "Phone", exec: "monkeycall-phone")
        let daemon = try await RunningDaemon(environment: ["XDG_DATA_DIRS": share.path + ":/usr/share"])
        let server = try await NotificationServer(address: daemon.bus.address, serverName: name, serverVersion: version)
        let plain = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        try await plain.reportIncoming("alice")
        let shown = try #require(await server.notified.next())
        #expect(shown.hints["desktop-entry"] == .string(PhoneApp.appID), "\(shown.hints)")
        #expect(shown.summary == summary && shown.body == body, "\(name) \(version): \(shown.summary) — \(shown.body)")
        #expect(shown.appName == "Monkey")
        // An app with a desktop file of its own keeps it, and the plain summary.
        let own = try await TestProvider(bus: daemon.bus, name: "Own", configuration: ["DesktopEntry": .string("org.example.Own")])
        try await own.reportIncoming("bob")
        let second = try #require(await server.notified.next { $0.appName == "Own" })
        #expect(second.hints["desktop-entry"] == .string("org.example.Own") && !second.summary.contains("Own"), "\(second.summary)")
    }

    @Test("no notification server: libnotify's own warning does not reach the log once per call")
    func libnotifyWarningOnce() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        for handle in ["alice", "bob", "carol"] { try await app.reportIncoming(handle) }
        #expect(await daemon.daemon.waitForOutput(containing: "cannot show notifications"))
        // A fence: the daemon has handled all three calls once `calls` lists them.
        #expect(try await daemon.cli("calls").stdout.contains("carol"))
        let output = daemon.daemon.output
        #expect(output.components(separatedBy: "Failed to connect to proxy").count <= 2, "\(output)")
        #expect(!output.contains("libnotify-WARNING"), "\(output)")
    }

    @Test("xfce4-notifyd draws the default action as a button: there it is left out where it would repeat Answer, kept where it opens the app")
    func defaultButtonOnXfce() async throws {
        let daemon = try await RunningDaemon()
        defer { withExtendedLifetime(daemon) {} }
        let server = try await NotificationServer(address: daemon.bus.address, serverName: "Xfce Notify Daemon")
        let plain = try await TestProvider(bus: daemon.bus, name: "Plain", configuration: [:])
        try await plain.reportIncoming("alice")
        #expect(try #require(await server.notified.next()).actions == ["answer", "Answer", "decline", "Decline", "silence", "Silence"])
        let monkey = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: ["DesktopEntry": .string("org.example.Monkey")])
        try await monkey.reportIncoming("bob")
        #expect(try #require(await server.notified.next { $0.body.hasPrefix("bob") }).actions.suffix(2) == ["default", "Open Monkey"])
    }
}
