import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Media players (MPRIS) on the private bus, each on its own connection, around calls.
@Suite("Media pauses during calls")
struct MediaPauseTests {
    static let manager = Telephony1.Manager.interface

    /// An incoming call from `handle`, answered by the user and fulfilled by the app: its audio session activates.
    static func answeredCall(_ fixture: ServiceFixture, _ app: TestProvider, from handle: String = "alice") async throws -> String {
        let uuid = try await app.reportIncoming(handle)
        try await fixture.control("AnswerCall", [.string(uuid)])
        try await app.perform("answer")
        return uuid
    }

    static func end(_ fixture: ServiceFixture, _ app: TestProvider, _ uuid: String) async throws {
        let transaction = try await fixture.control("EndCall", [.string(uuid)])
        try await app.perform("end")
        #expect(await fixture.completion(of: try String(dbusValue: transaction[0]))?.0 == true)
    }

    static func calls(_ player: MediaPlayer, from sender: String) -> [String] {
        player.received.all.filter { $0.sender == sender }.map(\.member)
    }

    @Test("a call pauses the playing player and resumes it when it ends; the paused player is never touched")
    func pauseAndResume() async throws {
        let fixture = try await ServiceFixture()
        let service = fixture.service.connection.uniqueName
        let music = try await MediaPlayer(address: fixture.bus.address, name: "music", status: "Playing")
        let podcast = try await MediaPlayer(address: fixture.bus.address, name: "podcast", status: "Paused")
        let app = try await fixture.provider("Monkey")

        let uuid = try await Self.answeredCall(fixture, app)
        let pause = try #require(await music.received.next())
        #expect(pause.member == "Pause" && pause.sender == service)
        #expect(music.playbackStatus == "Paused")

        try await Self.end(fixture, app, uuid)
        let play = try #require(await music.received.next())
        #expect(play.member == "Play" && play.sender == service)
        #expect(music.playbackStatus == "Playing")
        await fixture.service.settleMedia()
        #expect(music.received.all.count == 2)
        #expect(podcast.received.all.isEmpty, "\(podcast.received.all)")
        #expect(podcast.playbackStatus == "Paused")
    }

    @Test("a player already on the bus when the service starts is paused and resumed; one that comes later too")
    func playersBeforeAndAfterStart() async throws {
        let bus = try await PrivateBus.start()
        let early = try await MediaPlayer(address: bus.address, name: "early", status: "Playing")
        let fixture = try await ServiceFixture(bus: bus)
        let late = try await MediaPlayer(address: bus.address, name: "late", status: "Playing")
        let app = try await fixture.provider("Monkey")

        let uuid = try await Self.answeredCall(fixture, app)
        #expect(await early.received.next()?.member == "Pause")
        #expect(await late.received.next()?.member == "Pause")
        try await Self.end(fixture, app, uuid)
        #expect(await early.received.next()?.member == "Play")
        #expect(await late.received.next()?.member == "Play")
    }

    /// Music and a video playing, then a call that paused both.
    struct TwoPlayersPaused {
        let fixture: ServiceFixture
        let music: MediaPlayer
        let video: MediaPlayer
        let app: TestProvider
        let call: String
        /// The service's unique name: who the players see pausing and resuming them.
        var service: String { fixture.service.connection.uniqueName }

        init() async throws {
            fixture = try await ServiceFixture()
            music = try await MediaPlayer(address: fixture.bus.address, name: "music", status: "Playing")
            video = try await MediaPlayer(address: fixture.bus.address, name: "video", status: "Playing")
            app = try await fixture.provider("Monkey")
            call = try await MediaPauseTests.answeredCall(fixture, app)
            #expect(await music.received.next()?.member == "Pause")
            #expect(await video.received.next()?.member == "Pause")
        }

        /// Ends the call; the video is resumed by the service.
        func endCall() async throws {
            try await MediaPauseTests.end(fixture, app, call)
            let resumed = try #require(await video.received.next())
            #expect(resumed.member == "Play" && resumed.sender == service)
            await fixture.service.settleMedia()
        }
    }

    @Test("a player the user started again during the call is left alone afterwards; the others resume")
    func userRestartedPlayer() async throws {
        let players = try await TwoPlayersPaused()
        let music = players.music
        // The user plays the music during the call, then pauses it again (as playerctl or a media key would).
        let user = try Connection(address: players.fixture.bus.address)
        for member in ["Play", "Pause"] {
            try await user.call(destination: music.name, path: MediaPlayer.path, interface: MediaPlayer.player, member: member)
        }
        #expect(music.playbackStatus == "Paused")

        try await players.endCall()
        #expect(Self.calls(music, from: players.service) == ["Pause"])
        #expect(Self.calls(music, from: user.uniqueName) == ["Play", "Pause"])
        #expect(music.playbackStatus == "Paused")
    }

    @Test("a player that quits during the call causes no error; the call ends and the others resume")
    func playerVanishes() async throws {
        let players = try await TwoPlayersPaused()
        let fixture = players.fixture
        players.music.quit()
        try await players.endCall()
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")
        let recent = try await fixture.root(Telephony1.Recents.interface, "List", [.uint32(1), .uint32(0)])
        guard case .array(_, let entries)? = recent.first else { Issue.record("no Recents"); return }
        #expect(entries.first?.vardict?["Status"] == .string("answered"))
    }

    @Test("PausesMediaDuringCalls false: players play on through the call")
    func turnedOff() async throws {
        let fixture = try await ServiceFixture()
        let music = try await MediaPlayer(address: fixture.bus.address, name: "music", status: "Playing")
        let app = try await fixture.provider("Monkey")
        try await fixture.root("org.freedesktop.DBus.Properties", "Set",
                               [.string(Self.manager), .string("PausesMediaDuringCalls"), .variant(.bool(false))])
        let uuid = try await Self.answeredCall(fixture, app)
        await fixture.service.settleMedia()
        try await Self.end(fixture, app, uuid)
        await fixture.service.settleMedia()
        #expect(music.received.all.isEmpty)
        #expect(music.playbackStatus == "Playing")
    }

    @Test("with the daemon option off, the property reads false and refuses true")
    func daemonOptionOff() async throws {
        let fixture = try await ServiceFixture { $0.pausesMedia = false }
        let music = try await MediaPlayer(address: fixture.bus.address, name: "music", status: "Playing")
        let value = try await fixture.root("org.freedesktop.DBus.Properties", "Get", [.string(Self.manager), .string("PausesMediaDuringCalls")])
        #expect(value.first?.unwrappedVariant == .bool(false))
        let refused = await dbusError {
            try await fixture.root("org.freedesktop.DBus.Properties", "Set",
                                   [.string(Self.manager), .string("PausesMediaDuringCalls"), .variant(.bool(true))])
        }
        #expect(refused?.name == "org.freedesktop.DBus.Error.NotSupported")
        #expect(refused?.message.contains("--no-pause-media") == true)
        let app = try await fixture.provider("Monkey")
        let uuid = try await Self.answeredCall(fixture, app)
        try await Self.end(fixture, app, uuid)
        await fixture.service.settleMedia()
        #expect(music.received.all.isEmpty)
    }

    @Test("PausesMediaDuringCalls survives a restart; a settings file from before it existed keeps its settings")
    func persisted() async throws {
        let bus = try await PrivateBus.start()
        // Written by an older monkeycalld: no pausesMediaDuringCalls key.
        let data = bus.directory.appendingPathComponent("data/monkeycall")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try #"{"doNotDisturb": true}"#.write(to: data.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let database = data.appendingPathComponent("monkeycall.sqlite").path
        let first = try await RunningDaemon(bus: bus, ["--database", database])
        #expect(try await first.cli("dnd", "status").stdout.contains("Do Not Disturb: on"))
        let busctl = ["--address=\(bus.address)", Telephony1.busName, Telephony1.rootPath.rawValue, Self.manager, "PausesMediaDuringCalls"]
        #expect(try await first.run("/usr/bin/busctl", ["get-property"] + busctl).stdout == "b true\n")
        #expect(try await first.run("/usr/bin/busctl", ["set-property"] + busctl + ["b", "false"]).status == 0)
        first.daemon.terminate()
        #expect(await first.daemon.waitForExit() == 0)
        let second = try await RunningDaemon(bus: bus, ["--database", database])
        #expect(try await second.run("/usr/bin/busctl", ["get-property"] + busctl).stdout == "b false\n")
    }
}
