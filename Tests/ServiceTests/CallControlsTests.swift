import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The ongoing-call notification (issue 17): through real libnotify in monkeycalld to the test
/// notification server.
@Suite("Call controls: the ongoing-call notification")
struct CallControlsTests {
    /// A ringing call from Alice, answered from its notification; returns the ongoing notification.
    static func answeredCall(_ daemon: RunningDaemon, _ server: NotificationServer, _ app: TestProvider)
        async throws -> (uuid: String, ringing: NotificationServer.Notification, ongoing: NotificationServer.Notification) {
        let uuid = try await app.reportIncoming("alice", update: ["LocalizedCallerName": .string("Alice")])
        let ringing = try #require(await server.notified.next())
        try server.invoke(ringing.id, "answer")
        try await app.perform("answer")
        let ongoing = try #require(await server.notified.next { $0.summary == "Call with Alice" })
        return (uuid, ringing, ongoing)
    }

    /// Alice's call to Monkey on a rig of its own, answered from its notification; `body` has the
    /// rig's notification server and app, the call's UUID and the ongoing notification.
    static func withAnsweredCall(_ body: (NotificationServer, TestProvider, String, NotificationServer.Notification) async throws -> Void) async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", monkey)
        defer { withExtendedLifetime(daemon) {} }
        let (uuid, _, ongoing) = try await answeredCall(daemon, server, app)
        try await body(server, app, uuid, ongoing)
    }

    /// An app with a desktop entry and an icon.
    static let monkey: [String: DBusValue] = ["DesktopEntry": .string("org.example.Monkey"), "IconName": .string("call-start")]

    static func app(_ daemon: RunningDaemon) async throws -> TestProvider {
        try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: monkey)
    }

    @Test("an answered call's notification becomes the ongoing one in place: summary, body, buttons, hints")
    func ongoingNotification() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Monkey", Self.monkey)
        let (_, ringing, ongoing) = try await Self.answeredCall(daemon, server, app)
        #expect(ongoing.id == ringing.id && ongoing.replacesID == ringing.id, "replaced in place")
        let lines = ongoing.body.components(separatedBy: "\n")
        // "alice" only repeats the name the summary gives ("Call with Alice"): not shown again.
        #expect(lines.count == 2 && lines[0] == "Monkey" && lines[1].hasPrefix("since "), "\(ongoing.body)")
        #expect(lines.last?.wholeMatch(of: /since \d\d:\d\d/) != nil)
        #expect(ongoing.actions == ["hang-up", "Hang Up", "mute", "Mute", "hold", "Hold", "show-app", "Open Monkey"])
        #expect(ongoing.hints["category"] == .string("call.ongoing"))
        #expect(ongoing.hints["resident"] == .bool(true))
        #expect(ongoing.hints["urgency"] == .byte(1))
        #expect(ongoing.hints["desktop-entry"] == .string("org.example.Monkey"))
        #expect(ongoing.hints["sound-name"] == nil && ongoing.hints["sound-file"] == nil)
        #expect(ongoing.icon == "call-start")
        #expect(ongoing.timeout == 0)
    }

    @Test("an outgoing call: Calling…, then Call with; no Hold where the call cannot hold, no Open without a desktop entry")
    func outgoing() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Plain", [:])
        let dial = try await daemon.cli("dial", "bob")
        #expect(dial.status == 0, "\(dial.stderr)")
        let uuid = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try await app.perform("start")
        let calling = try #require(await server.notified.next { $0.summary == "Calling bob…" })
        // No window of its own: a click on the body ("default") opens the Phone app's call window.
        #expect(Self.ids(calling) == ["hang-up", "mute", "hold", "default"])
        try await app.call("ReportCallUpdated", [.string(uuid), .vardict(["SupportsHolding": .bool(false)])])
        try await app.call("ReportOutgoingCallConnected", [.string(uuid), .uint64(0)])
        let connected = try #require(await server.notified.next { $0.summary == "Call with bob" })
        #expect(connected.id == calling.id)
        #expect(Self.ids(connected) == ["hang-up", "mute", "default"])
    }

    static func ids(_ notification: NotificationServer.Notification) -> [String] {
        stride(from: 0, to: notification.actions.count, by: 2).map { notification.actions[$0] }
    }

    @Test("Mute/Unmute and Hold/Resume are the matching actions and replace the notification in place")
    func muteAndHold() async throws {
        try await Self.withAnsweredCall { server, app, uuid, ongoing in
            try server.invoke(ongoing.id, "mute")
            let mute = try await app.perform("set-muted")
            #expect(mute.call == uuid && mute.args["Muted"] == .bool(true))
            let muted = try #require(await server.notified.next { $0.body.hasSuffix("\nmuted") })
            #expect(muted.replacesID == ongoing.id && Self.ids(muted) == ["hang-up", "unmute", "hold", "show-app"])

            try server.invoke(ongoing.id, "unmute")
            #expect(try await app.perform("set-muted").args["Muted"] == .bool(false))
            let unmuted = try #require(await server.notified.next { !$0.body.hasSuffix("muted") })
            #expect(unmuted.replacesID == ongoing.id)

            try server.invoke(ongoing.id, "hold")
            #expect(try await app.perform("set-held").args["OnHold"] == .bool(true))
            let held = try #require(await server.notified.next { $0.summary == "Alice — on hold" })
            #expect(held.replacesID == ongoing.id && Self.ids(held) == ["hang-up", "mute", "resume", "show-app"])

            try server.invoke(ongoing.id, "resume")
            #expect(try await app.perform("set-held").args["OnHold"] == .bool(false))
            let resumed = try #require(await server.notified.next { $0.summary == "Call with Alice" })
            #expect(resumed.replacesID == ongoing.id)
        }
    }

    @Test("Hang Up ends the call; Call ended · M:SS replaces the notification and expires after 5 s")
    func hangUp() async throws {
        try await Self.withAnsweredCall { server, app, uuid, ongoing in
            try server.invoke(ongoing.id, "hang-up")
            let end = try await app.perform("end")
            #expect(end.call == uuid)
            let ended = try #require(await server.notified.next { $0.summary.hasPrefix("Call ended") })
            #expect(ended.summary.wholeMatch(of: /Call ended · \d+:\d\d/) != nil, "\(ended.summary)")
            #expect(ended.replacesID == ongoing.id)
            #expect(ended.hints["category"] == .string("call.ended"))
            #expect(ended.timeout == 5000)
            #expect(ended.actions.isEmpty)
        }
    }

    @Test("Open APP reaches the provider as DidRequestShowApp")
    func showApp() async throws {
        try await Self.withAnsweredCall { server, app, uuid, ongoing in
            try server.invoke(ongoing.id, "show-app")
            let signal = try #require(await app.signals.next("DidRequestShowApp"))
            #expect(try signal.arguments() == [.string(uuid)])
        }
    }

    @Test("the notification closes when a call that never connected ends; a declined call leaves no Call ended")
    func closesAndNoCallEnded() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Plain", [:])
        let dial = try await daemon.cli("dial", "bob")
        let uuid = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try await app.perform("start")
        let calling = try #require(await server.notified.next { $0.summary == "Calling bob…" })
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        #expect(await server.closed.next() == calling.id)

        _ = try await app.reportIncoming("carol")
        let ringing = try #require(await server.notified.next())
        try server.invoke(ringing.id, "decline")
        try await app.perform("end")
        #expect(await server.closed.next() == ringing.id)
        // The next notification is the next call's, not a "Call ended".
        _ = try await app.reportIncoming("dave")
        #expect(try #require(await server.notified.next()).summary == "Incoming call")
    }

    @Test("at most 3 calls have their own ongoing notification, then one counts the rest")
    func bounded() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Plain", ["MaximumCallGroups": .uint32(4)])
        for (index, handle) in ["a", "b", "c", "d"].enumerated() {
            let dial = try await daemon.cli("dial", handle)
            #expect(dial.status == 0, "\(dial.stderr)")
            // After the first, starting a call holds the one that is active: two actions.
            for _ in 0..<(index == 0 ? 1 : 2) { try await app.fulfill(await app.nextAction()) }
            try await app.call("ReportOutgoingCallConnected", [.string(dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), .uint64(0)])
        }
        let more = try #require(await server.notified.next { $0.summary == "1 more call" })
        #expect(more.body == "Plain: 1")
        let own = Set(server.notified.all.filter { $0.hints["category"] == .string("call.ongoing") && $0.summary != "1 more call" }.map(\.id))
        #expect(own.count == 3)
    }

    /// `ShowsCallControls` as busctl reads it ("b true").
    static func showsCallControls(_ daemon: RunningDaemon) async throws -> String {
        try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "get-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                 Telephony1.Manager.interface, "ShowsCallControls"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("ShowsCallControls false: no ongoing notification, and it persists; --no-call-controls refuses true")
    func turnedOff() async throws {
        let (daemon, server, app) = try await NotificationRig.start(app: "Plain", [:])
        let set = try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "set-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                           Telephony1.Manager.interface, "ShowsCallControls", "b", "false"])
        #expect(set.status == 0, "\(set.stderr)")
        let uuid = try await app.reportIncoming("alice")
        let ringing = try #require(await server.notified.next())
        try server.invoke(ringing.id, "answer")
        try await app.perform("answer")
        #expect(await server.closed.next() == ringing.id)
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        _ = try await app.reportIncoming("bob")
        #expect(try #require(await server.notified.next()).summary == "Incoming call", "no ongoing or Call ended notification came first")
        // Persisted: the next daemon, with the same data folder, reads it.
        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0)
        let next = try await RunningDaemon(bus: daemon.bus)
        #expect(try await Self.showsCallControls(next) == "b false")

        let off = try await RunningDaemon(["--no-call-controls"])
        #expect(try await Self.showsCallControls(off) == "b false")
        let refused = try await off.run("/usr/bin/busctl", ["--address=\(off.bus.address)", "set-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                            Telephony1.Manager.interface, "ShowsCallControls", "b", "true"])
        #expect(refused.status != 0 && refused.stderr.contains("--no-call-controls"), "\(refused.stderr)")
    }

    @Test("Open APP activates a DBusActivatable app with org.freedesktop.Application.Activate, and launches any other's desktop file")
    func showAppActivates() async throws {
        let bus = try await PrivateBus.start()
        let applications = bus.directory.appendingPathComponent("data/applications")
        try writeDesktopFile("org.example.Monkey.desktop", in: applications, name: "Monkey", exec: "true", more: "DBusActivatable=true\n")
        // Launched, the app says so on the bus.
        try writeDesktopFile("org.example.Plain.desktop", in: applications, name: "Plain",
                             exec: "dbus-send \"--bus=\(bus.address)\" --type=signal /org/example/Plain org.example.Plain.Launched")
        let daemon = try await RunningDaemon(bus: bus, environment: ["XDG_DATA_HOME": bus.directory.appendingPathComponent("data").path])
        let server = try await NotificationServer(address: bus.address)

        // The app's own connection owns its well-known name, as a D-Bus-activatable app does.
        let monkey = try await ActivatableApp("org.example.Monkey", bus: bus.address)
        let launches = try await SignalRecorder(monkey.connection, MatchRule(interface: "org.example.Plain"))
        let app = try await Self.app(daemon)
        let (_, _, ongoing) = try await Self.answeredCall(daemon, server, app)
        try server.invoke(ongoing.id, "show-app")
        #expect(await monkey.activated.next() != nil, "Activate was not called")

        let plain = try await TestProvider(bus: bus, name: "Plain", configuration: ["DesktopEntry": .string("org.example.Plain.desktop")])
        let uuid = try await plain.reportIncoming("bob")
        let ringing = try #require(await server.notified.next { $0.body.hasPrefix("bob") })
        // The ringing notification's default action brings the app forward too.
        try server.invoke(ringing.id, "default")
        #expect(try #require(await plain.signals.next("DidRequestShowApp")).arguments() == [.string(uuid)])
        #expect(await launches.next("Launched") != nil, "the desktop file was not launched: \(daemon.daemon.output)")
        _ = daemon
    }

    @Test("Open APP for a sandboxed app: Activate on its app id's bus name when it owns it; else flatpak run APPID as a systemd user service (outside the daemon's unit); never the desktop file in the app-writable applications folder (found on main: gio launch of that file, as the daemon's child)", .enabled(if: Sandbox.isAvailable, "bubblewrap is not installed"))
    func showSandboxedApp() async throws {
        let bus = try await PrivateBus.start()
        let data = bus.directory.appendingPathComponent("data")
        let applications = data.appendingPathComponent("applications")
        let signal = { (member: String) in "dbus-send \"--bus=\(bus.address)\" --type=signal /org/example/Launches org.example.Launches.\(member)" }
        // What an app with home access could write: it must never run.
        try writeDesktopFile("org.example.Mallory.desktop", in: applications, name: "Mallory", exec: signal("DesktopFile"))
        // Stand-ins for the systemd user manager's systemd-run and for flatpak (no user manager
        // or Flatpak app here): each says on the bus how it was called; systemd-run then runs the command.
        let bin = bus.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for (name, body) in [("systemd-run", "\(signal("SystemdRun")) string:\"$*\"\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n"),
                             ("flatpak", "\(signal("Flatpak")) string:\"$*\"\n")] {
            try writeExecutable("#!/bin/sh\n" + body, to: bin.appendingPathComponent(name))
        }
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let daemon = try await RunningDaemon(bus: bus, environment: ["XDG_DATA_HOME": data.path, "PATH": path])
        let server = try await NotificationServer(address: bus.address)
        let watcher = try Connection(address: bus.address)
        let launches = try await SignalRecorder(watcher, MatchRule(interface: "org.example.Launches"))

        let app = try await SandboxedApp(appID: "org.example.Mallory", bus: bus)
        let provider = try await app.registerProvider(name: "Mallory")
        _ = try await app.reportIncoming(provider, "bob")
        let ringing = try #require(await server.notified.next { $0.body.hasPrefix("bob") })
        try server.invoke(ringing.id, "default")
        // Nothing owns org.example.Mallory: Flatpak runs the app, started by the user manager.
        let systemdRun = try #require(await launches.next("SystemdRun", timeout: .seconds(20)), "\(daemon.daemon.output)")
        let arguments = String(describing: try systemdRun.arguments())
        #expect(arguments.contains("--user") && arguments.contains("-- flatpak run org.example.Mallory"), "\(arguments)")
        #expect(try #require(await launches.next("Flatpak")).arguments() == [.string("run org.example.Mallory")])

        // Running, the app owns its app id's name: Activate reaches it.
        let running = try await ActivatableApp("org.example.Mallory", bus: bus.address)
        _ = try await app.reportIncoming(provider, "carol")
        let second = try #require(await server.notified.next { $0.body.hasPrefix("carol") })
        try server.invoke(second.id, "default")
        #expect(await running.activated.next() != nil, "Activate was not called")
        #expect(await launches.next("DesktopFile", timeout: .milliseconds(300)) == nil, "the app-writable desktop file was run")
    }
}
