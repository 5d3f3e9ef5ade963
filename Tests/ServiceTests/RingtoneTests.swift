import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The service rings (issue 40): the ringing call's ringtone plays through a real PulseAudio
/// server, looped, until the call stops ringing; read off the server as `pactl` shows it.
@Suite("The ring: the service plays the ringtone on the sound server", .enabled(if: SoundServer.isAvailable, "pulseaudio or pactl is missing"))
struct RingtoneTests {
    /// The ringtone streams: the phone's role.
    static func isRing(_ stream: SoundServer.Stream) -> Bool { stream.properties["media.role"] == "phone" }

    /// A daemon ringing through `sound`, a notification server, and an app named Monkey.
    static func rig(_ sound: SoundServer, _ arguments: [String] = [], configuration: [String: DBusValue] = [:])
        async throws -> (RunningDaemon, NotificationServer, TestProvider) {
        let daemon = try await RunningDaemon(["--ring-timeout", "600"] + arguments, environment: sound.environment)
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: configuration)
        return (daemon, server, app)
    }

    static func control(_ daemon: RunningDaemon, _ member: String, _ uuid: String) async throws {
        let user = try Connection(address: daemon.bus.address)
        defer { user.close() }
        try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                            member: member, [.string(uuid)])
    }

    @Test("a ringing call's ringtone plays on the sound server, tagged media.role=phone, event.id and the app's name, loops, and stops on Answer; the notification asks the server for no sound of its own and offers Silence (found on main: no stream at all)")
    func ringsLoopsAndStopsOnAnswer() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        let uuid = try await app.reportIncoming("alice")
        let ring = try #require(try await sound.waitForStream(where: Self.isRing), "no ringtone played: \(daemon.daemon.output)")
        #expect(ring.properties["event.id"] == "phone-incoming-call", "\(ring)")
        #expect(ring.properties["application.name"] == "Monkey", "\(ring)")
        let shown = try #require(await server.notified.next())
        #expect(shown.hints["suppress-sound"] == .bool(true))
        #expect(shown.actions.contains("silence"), "\(shown.actions)")
        // Looped: when the sound ends, it plays again (a new stream).
        let again = try await sound.waitForStream(timeout: .seconds(30)) { Self.isRing($0) && $0.index != ring.index }
        #expect(again != nil, "the ringtone did not play a second time")
        let answered = ContinuousClock.now
        try await Self.control(daemon, "AnswerCall", uuid)
        _ = try await app.perform("answer")
        #expect(try await sound.waitForSilence(where: Self.isRing), "the ringtone went on after Answer")
        print("ring: answered → silence in \(ContinuousClock.now - answered)")
    }

    @Test("Silence() stops the ringtone and says so (Silenced); the call still rings; the notification's Silence button and its dismissal stop it too")
    func silence() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        let user = try Connection(address: daemon.bus.address)
        // Silence().
        let first = try await app.reportIncoming("alice")
        #expect(try await sound.waitForStream(where: Self.isRing) != nil)
        try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(first), interface: Telephony1.Call.interface, member: "Silence")
        #expect(try await sound.waitForSilence(where: Self.isRing), "Silence() left it ringing")
        let silenced = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(first), interface: "org.freedesktop.DBus.Properties",
                                           member: "Get", [.string(Telephony1.Call.interface), .string("Silenced")])
        #expect(silenced.first == .variant(.bool(true)))
        let state = try await user.call(destination: Telephony1.busName, path: Telephony1.callPath(first), interface: "org.freedesktop.DBus.Properties",
                                        member: "Get", [.string(Telephony1.Call.interface), .string("State")])
        #expect(state.first == .variant(.string("ringing")))
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])

        // The Silence button.
        let second = try await app.reportIncoming("bob")
        #expect(try await sound.waitForStream(where: Self.isRing) != nil)
        let card = try #require(await server.notified.next { $0.body.contains("bob") && $0.actions.contains("silence") })
        try server.invoke(card.id, "silence")
        #expect(try await sound.waitForSilence(where: Self.isRing), "the Silence button left it ringing")
        try await app.call("ReportCallEnded", [.string(second), .string("remote-ended"), .uint64(0)])

        // The user dismissing the card.
        _ = try await app.reportIncoming("carol")
        #expect(try await sound.waitForStream(where: Self.isRing) != nil)
        let third = try #require(await server.notified.next { $0.body.contains("carol") })
        try server.dismiss(third.id)
        #expect(try await sound.waitForSilence(where: Self.isRing), "dismissing the card left it ringing")
    }

    @Test("a host app's ringtone file plays; a missing one rings the theme's default; --no-ringtone leaves the sound to the notification server")
    func soundsAndTheSwitch() async throws {
        let sound = try await SoundServer()
        let file = "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga"
        let (daemon, server, app) = try await Self.rig(sound, configuration: ["RingtoneSound": .string(file)])
        defer { withExtendedLifetime(server) {} }
        let first = try await app.reportIncoming("alice")
        let played = try #require(try await sound.waitForStream(where: Self.isRing))
        #expect(played.properties["media.filename"] == file, "\(played)")
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])
        #expect(try await sound.waitForSilence(where: Self.isRing))

        let missing = try await TestProvider(bus: daemon.bus, name: "Missing", configuration: ["RingtoneSound": .string("/nonexistent/ring.oga")])
        _ = try await missing.reportIncoming("bob")
        let fallback = try #require(try await sound.waitForStream(where: Self.isRing))
        #expect(fallback.properties["event.id"] == "phone-incoming-call", "\(fallback)")

        // Switched off: the notification server's sound, as before, and nothing on the sound server.
        let quiet = try await SoundServer()
        let (quietDaemon, quietServer, other) = try await Self.rig(quiet, ["--no-ringtone"])
        defer { withExtendedLifetime(quietDaemon) {} }
        _ = try await other.reportIncoming("carol")
        let shown = try #require(await quietServer.notified.next())
        #expect(shown.hints["suppress-sound"] == nil && shown.hints["sound-name"] == .string("phone-incoming-call"), "\(shown.hints)")
        #expect(!shown.actions.contains("silence"))
        #expect(try await quiet.streams().filter(Self.isRing).isEmpty)
    }

    @Test("no sound server: calls work and one warning is logged; a server that starts later rings the next call")
    func noSoundServerThenOne() async throws {
        let later = try await SoundServer(start: false)
        let (daemon, server, app) = try await Self.rig(later)
        let first = try await app.reportIncoming("alice")
        #expect(await server.notified.next() != nil, "the call did not ring on screen")
        #expect(await daemon.daemon.waitForOutput(containing: "cannot ring"), "\(daemon.daemon.output)")
        try await Self.control(daemon, "AnswerCall", first)
        _ = try await app.perform("answer")
        try await later.start()
        _ = try await app.reportIncoming("bob")
        #expect(try await later.waitForStream(where: Self.isRing) != nil, "the server that came later did not ring")
        #expect(daemon.daemon.output.components(separatedBy: "cannot ring").count == 2, "one warning")
    }
}
