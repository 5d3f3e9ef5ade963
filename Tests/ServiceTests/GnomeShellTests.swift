import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A call on a real GNOME Shell 43, headless (`GnomeShellStage`): monkeycalld rings through the
/// shell's own notification server, and what a GNOME user sees, clicks and hears is read back from
/// the shell and the sound server. One shell per test, for tests that share no state: it is ready
/// in about 1.3 s alone (1.1–3.1 s in 36 starts) and 5–11 s while the whole suite starts around it,
/// where this suite takes about 90 s and ends with the longest ones. Serialized: a shell takes
/// about 210 MB and a core while it starts.
///
/// What GNOME Shell 43 draws differs from later versions (46 adds the app's name to banners): the
/// exact texts asserted here are 43's.
@Suite("GNOME Shell 43: a call on a real shell", .serialized,
       .enabled(if: GnomeShellStage.isAvailable, Comment(rawValue: GnomeShellStage.unavailableReason ?? "")),
       .enabled(if: SoundServer.isAvailable, "pulseaudio or pactl is missing"))
struct GnomeShellTests {
    /// The ringtone the service plays (RingtoneTests): the phone's role.
    static func isRing(_ stream: SoundServer.Stream) -> Bool { stream.properties["media.role"] == "phone" }

    static let handle = "+1 408 555 0123"
    static let caller = "Alice Liddell"

    /// A bus whose notification server is GNOME Shell, a sound server both the shell and the
    /// service play on, monkeycalld, and an app named Monkey that gave no icon and no desktop entry.
    struct Rig {
        let sound: SoundServer
        let stage: GnomeShellStage
        let daemon: RunningDaemon
        let app: TestProvider

        static func start() async throws -> Rig {
            let sound = try await SoundServer()
            let bus = try await PrivateBus.start()
            let stage = try await GnomeShellStage.start(bus: bus, environment: sound.environment)
            print("gnome-shell: ready in \(stage.shellStartTime) (the stage, system bus included, in \(stage.stageStartTime))")
            let daemon = try await RunningDaemon(bus: bus, environment: sound.environment, owningBus: true)
            let app = try await TestProvider(bus: bus, name: "Monkey", configuration: [:])
            return Rig(sound: sound, stage: stage, daemon: daemon, app: app)
        }

        /// Alice rings.
        func ring() async throws -> String {
            try await app.reportIncoming(GnomeShellTests.handle, update: ["LocalizedCallerName": .string(GnomeShellTests.caller)])
        }

        func state(_ uuid: String) async throws -> DBusValue? {
            let user = try Connection(address: daemon.bus.address)
            defer { user.close() }
            let reply = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(uuid), interface: "org.freedesktop.DBus.Properties",
                                            member: "Get", [.string(Telephony1.Call.interface), .string("State")])
            return reply.first?.unwrappedVariant
        }

        func stop() async { await stage.stop() }
    }

    @Test("a ringing call shows GNOME 43's banner: \"Incoming call\", the caller's name and number on two lines, Answer · Decline · Silence, critical and expanded; no app name, the fallback icon; the tray's source is the app's name")
    func ringingBanner() async throws {
        let rig = try await Rig.start()
        let began = ContinuousClock.now
        _ = try await rig.ring()
        let banner = try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        print("gnome-shell: banner settled \(ContinuousClock.now - began) after the call was reported")
        #expect(banner.title == "Incoming call")
        #expect(banner.body == "\(Self.caller)\n\(Self.handle)", "\(banner)")
        // GNOME 43 draws at most 3 buttons, and the `default` action as a click on the body: the
        // service's 4th action (default, "Answer") is no button.
        #expect(banner.buttonLabels == ["Answer", "Decline", "Silence"], "\(banner)")
        #expect(banner.urgency == "critical" && banner.expanded, "\(banner)")
        // TODO(product gap, GNOME Shell < 46): 43 draws no app name on a banner, and an app that gave
        // no icon gets the shell's fallback for urgency 2, dialog-error (a red "no entry" sign): the
        // service should name the app in the body and send an icon (call-start-symbolic) there.
        #expect(banner.icon == "dialog-error", "\(banner)")
        let held = try await rig.stage.notifications()
        #expect(held.count == 1 && held.first?.source == "Monkey" && held.first?.resident == true, "\(held)")
        #expect(try await rig.sound.waitForStream(where: Self.isRing) != nil, "no ringtone played: \(rig.daemon.daemon.output)")
        // TODO(product gap): GNOME Shell 43 reads no suppress-sound hint. It plays the sound-name
        // the service still sends (Mutter's stream, media.role=event, once, 1.5 s) on top of the
        // service's own looped ring, and again each time the ringing notification is posted anew
        // (Silence, unlock): when the service rings itself it should send no sound-name or sound-file.
        #expect(held.first?.sound == "phone-incoming-call", "\(held)")
        // What the service knows of the server: its name and version (no app name drawn before 46).
        let user = try Connection(address: rig.daemon.bus.address)
        defer { user.close() }
        let server = try await user.call(destination: NotificationServer.name, path: NotificationServer.path,
                                         interface: NotificationServer.name, member: "GetServerInformation")
        #expect(server.count == 4 && server[0] == .string("gnome-shell") && server[1] == .string("GNOME"), "\(server)")
        if case .string(let version)? = server.dropFirst(2).first { #expect(version.hasPrefix("43."), "\(server)") }
        await rig.stop()
    }

    @Test("clicking Answer with a pointer on the shell's banner answers the call: the app is asked to answer, the call goes active, the ring stops, and the banner becomes the call's card")
    func clickAnswer() async throws {
        let rig = try await Rig.start()
        let uuid = try await rig.ring()
        try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        #expect(try await rig.sound.waitForStream(where: Self.isRing) != nil)
        let clicked = ContinuousClock.now
        try await rig.stage.click(actionLabel: "Answer")
        let answer = try #require(await rig.app.nextAction("answer"), "the click did not answer: \(rig.daemon.daemon.output)")
        print("gnome-shell: click → PerformAction(answer) in \(ContinuousClock.now - clicked)")
        #expect(answer.call == uuid)
        try await rig.app.fulfill(answer)
        #expect(try await rig.state(uuid) == .string("active"))
        #expect(try await rig.sound.waitForSilence(where: Self.isRing), "the ringtone went on after Answer")
        let card = try await rig.stage.waitForNotification { $0.title == "Call with \(Self.caller)" }
        #expect(card.urgency == "normal" && card.resident, "\(card)")
        await rig.stop()
    }

    @Test("a second call while one is up: GNOME 43 draws 3 of its buttons, Answer · Decline · Hold & Answer (End & Answer and Silence are lost); an app's IconName is the banner's icon")
    func secondCallWhileOneIsUp() async throws {
        let rig = try await Rig.start()
        let first = try await rig.ring()
        try await rig.stage.click(actionLabel: "Answer")
        try await rig.app.fulfill(await rig.app.nextAction("answer"))
        #expect(try await rig.state(first) == .string("active"))
        // The user moves on: a banner under the pointer stays (the first call's card, expanded), and
        // GNOME shows one banner at a time, so the next call's would wait behind it.
        try await rig.stage.movePointer(to: (1200, 700))
        let phone = try await TestProvider(bus: rig.daemon.bus, name: "Phone", configuration: ["IconName": .string("call-start-symbolic")])
        _ = try await phone.reportIncoming("bob")
        let banner = try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        #expect(banner.body == "bob" && banner.icon == "call-start-symbolic", "\(banner)")
        let held = try await rig.stage.waitForNotification { $0.source == "Phone" }
        #expect(held.actions == ["Answer", "Decline", "Hold & Answer", "End & Answer", "Silence"], "\(held)")
        // TODO(product gap, GNOME Shell 43): at most 3 buttons (MAX_NOTIFICATION_BUTTONS); the rest
        // are neither drawn nor reachable. On 43 the service should send 3 buttons at most, the
        // ones that matter first.
        #expect(banner.buttonLabels == ["Answer", "Decline", "Hold & Answer"], "\(banner)")
        await rig.stop()
    }

    @Test("Silence on the shell's banner stops the service's ring; the call can still be answered from the banner's body (GNOME 43 redraws the updated banner without buttons)")
    func silenceThenAnswerFromTheBody() async throws {
        let rig = try await Rig.start()
        let uuid = try await rig.ring()
        try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        #expect(try await rig.sound.waitForStream(where: Self.isRing) != nil)
        try await rig.stage.click(actionLabel: "Silence")
        #expect(try await rig.sound.waitForSilence(where: Self.isRing), "Silence left it ringing")
        // The service posts the ringing notification again, in place, without Silence.
        let silenced = try await rig.stage.waitForNotification { $0.actions == ["Answer", "Decline"] }
        #expect(silenced.title == "Incoming call" && silenced.urgency == "critical", "\(silenced)")
        // TODO(product gap, GNOME Shell 43): a notification replaced while its banner is on screen
        // loses the banner's buttons (the shell adds the new actions after the banner has redrawn
        // from the cleared list); the tray keeps them. The banner that stays offers no Answer and
        // no Decline: on 43 the service should withdraw and post anew rather than replace (or not
        // update a ringing banner at all). It also plays the sound-name again (see ringingBanner).
        let banner = try await rig.stage.waitForBanner()
        #expect(banner.title == "Incoming call" && banner.buttonLabels.isEmpty, "\(banner)")
        // What is left to the user: the banner's body, whose default action answers (no desktop entry).
        try await rig.stage.clickBanner()
        let answer = try #require(await rig.app.nextAction("answer"), "a click on the banner did not answer")
        #expect(answer.call == uuid)
        try await rig.app.fulfill(answer)
        #expect(try await rig.state(uuid) == .string("active"))
        await rig.stop()
    }

    @Test("while the screen is locked a call still rings on the sound server, the shell shows no banner and plays nothing, and the lock screen lists the app, critical; unlocked, the banner shows")
    func ringsWhileLocked() async throws {
        let rig = try await Rig.start()
        let locked = try await rig.stage.lock()
        #expect(locked.entries.isEmpty, "\(locked)")
        _ = try await rig.ring()
        let listed = try await rig.stage.waitForLockScreen { !$0.entries.isEmpty }
        // TODO(product gap): the lock screen names the notification's source, "Monkey" (app_name);
        // title and body only with details-in-lock-screen, which needs a desktop entry.
        #expect(listed.entries.map(\.labels) == [["Monkey"]], "\(listed)")
        #expect(listed.entries.first?.critical == true, "\(listed)")
        let ring = try #require(try await rig.sound.waitForStream(where: Self.isRing), "no ringtone while locked: \(rig.daemon.daemon.output)")
        #expect(ring.properties["application.name"] == "Monkey", "\(ring)")
        #expect(try await rig.stage.lockScreen().locked, "the screen was unlocked meanwhile")
        #expect(try await rig.stage.banner() == nil, "the unlock-dialog mode shows no banners")
        let streams = try await rig.sound.streams()
        #expect(streams.allSatisfy(Self.isRing), "only the service's ring plays while locked: \(streams)")

        try await rig.stage.unlock()
        let banner = try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        #expect(banner.buttonLabels == ["Answer", "Decline", "Silence"], "\(banner)")
        #expect(try await rig.sound.waitForStream(where: Self.isRing) != nil, "the ring stopped at unlock")
        await rig.stop()
    }

    @Test("a picture of the ringing banner on GNOME Shell 43 (docs/pictures/gnome-shell-ringing.png with MONKEYCALL_SCREENSHOTS=1; else a temporary file)")
    func screenshot() async throws {
        let rig = try await Rig.start()
        _ = try await rig.ring()
        try await rig.stage.waitForBanner { $0.title == "Incoming call" }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let picture = ProcessInfo.processInfo.environment["MONKEYCALL_SCREENSHOTS"] == "1"
            ? root.appendingPathComponent("docs/pictures/gnome-shell-ringing.png")
            : FileManager.default.temporaryDirectory.appendingPathComponent("gnome-shell-ringing-\(UUID().uuidString.prefix(8)).png")
        try await rig.stage.screenshot(to: picture)
        let data = try Data(contentsOf: picture)
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
        // The IHDR chunk: width and height, big-endian, at bytes 16 and 20.
        let size = (data[16..<20].reduce(0) { $0 << 8 | Int($1) }, data[20..<24].reduce(0) { $0 << 8 | Int($1) })
        #expect(size == (1280, 800), "\(size)")
        print("gnome-shell: picture at \(picture.path)")
        if ProcessInfo.processInfo.environment["MONKEYCALL_SCREENSHOTS"] != "1" { try? FileManager.default.removeItem(at: picture) }
        await rig.stop()
    }
}
