import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
@testable import Ringtone
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

    @Test("a ringing call's ringtone plays on the sound server, tagged media.role=phone, the sound's name and the app's name, loops, and stops on Answer; the notification asks the server for no sound of its own and offers Silence (found on main: no stream at all)")
    func ringsLoopsAndStopsOnAnswer() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        let uuid = try await app.reportIncoming("alice")
        let ring = try #require(try await sound.waitForStream(where: Self.isRing), "no ringtone played: \(daemon.daemon.output)")
        #expect(ring.properties["media.name"] == "phone-incoming-call", "\(ring)")
        // libcanberra plays the descriptor the ringer opened and checked, never a name it would look up.
        #expect(ring.properties["event.id"] == nil && ring.properties["media.filename"]?.hasPrefix("/proc/self/fd/") == true, "\(ring)")
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
        #expect(played.properties["media.name"] == file, "\(played)")
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])
        #expect(try await sound.waitForSilence(where: Self.isRing))

        let missing = try await TestProvider(bus: daemon.bus, name: "Missing", configuration: ["RingtoneSound": .string("/nonexistent/ring.oga")])
        _ = try await missing.reportIncoming("bob")
        let fallback = try #require(try await sound.waitForStream(where: Self.isRing))
        #expect(fallback.properties["media.name"] == "phone-incoming-call", "\(fallback)")

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

    @Test("where no sound server can be (every socket its clients would try missing), no ring loads libcanberra's sound server client to find out (issue 55: 1.4 million instructions at every ring of a daemon without one); a TCP server, an abstract name or nothing known is tried")
    func soundServerSocket() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sound-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("pulse"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("none").path
        let socket = folder.appendingPathComponent("pulse/native").path
        #expect(!SoundServerSocket.mayAnswer(environment: { ["PULSE_SERVER": "unix:" + missing][$0] }))
        #expect(!SoundServerSocket.mayAnswer(environment: { ["PULSE_SERVER": "{0123}unix:\(missing) \(missing)"][$0] }))
        #expect(!SoundServerSocket.mayAnswer(environment: { ["XDG_RUNTIME_DIR": folder.path][$0] }))
        #expect(SoundServerSocket.mayAnswer(environment: { ["PULSE_SERVER": "unix:\(missing) tcp:localhost:4713"][$0] }))
        #expect(SoundServerSocket.mayAnswer(environment: { _ in nil }))
        FileManager.default.createFile(atPath: socket, contents: nil)
        #expect(SoundServerSocket.mayAnswer(environment: { ["XDG_RUNTIME_DIR": folder.path][$0] }))
        #expect(SoundServerSocket.mayAnswer(environment: { ["PULSE_SERVER": "unix:" + socket][$0] }))
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

    static func setManager(_ daemon: RunningDaemon, _ property: String, _ value: Bool) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "set-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                 Telephony1.Manager.interface, property, "b", value ? "true" : "false"])
    }

    static func playsRingtone(_ daemon: RunningDaemon) async throws -> String {
        try await daemon.run("/usr/bin/busctl", ["--address=\(daemon.bus.address)", "get-property", Telephony1.busName, Telephony1.rootPath.rawValue,
                                                 Telephony1.Manager.interface, "PlaysRingtone"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("PlaysRingtone false leaves the sound to the notification server; true again rings the call that rings now; it persists; --no-ringtone reads false and refuses true (found on main: no such property)")
    func playsRingtoneSetting() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        let events = try await sound.events()
        #expect(try await Self.playsRingtone(daemon) == "b true")
        #expect(try await Self.setManager(daemon, "PlaysRingtone", false).status == 0)
        _ = try await app.reportIncoming("alice")
        let shown = try #require(await server.notified.next())
        #expect(shown.hints["suppress-sound"] == nil && shown.hints["sound-name"] == .string("phone-incoming-call"), "\(shown.hints)")
        #expect(!shown.actions.contains("silence"), "\(shown.actions)")
        #expect(events.appeared.isEmpty, "a stream while the setting was off: \(events.appeared)")
        // Turned on while the call rings: the service rings it, and the card says so.
        #expect(try await Self.setManager(daemon, "PlaysRingtone", true).status == 0)
        #expect(try await sound.waitForStream(where: Self.isRing) != nil, "turned on, nothing rang: \(daemon.daemon.output)")
        let again = try #require(await server.notified.next { $0.actions.contains("silence") })
        #expect(again.hints["suppress-sound"] == .bool(true) && again.hints["sound-name"] == nil, "\(again.hints)")
        #expect(try await Self.setManager(daemon, "PlaysRingtone", false).status == 0)
        #expect(try await sound.waitForSilence(where: Self.isRing), "turned off, it rang on")
        // Persisted: the next daemon, with the same data folder, reads it.
        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0)
        let next = try await RunningDaemon(bus: daemon.bus, environment: sound.environment)
        #expect(try await Self.playsRingtone(next) == "b false")

        let off = try await RunningDaemon(["--no-ringtone"])
        #expect(try await Self.playsRingtone(off) == "b false")
        let refused = try await Self.setManager(off, "PlaysRingtone", true)
        #expect(refused.status != 0 && refused.stderr.contains("--no-ringtone"), "\(refused.stderr)")
    }

    @Test("no sound for a call that does not ring on screen: Do Not Disturb, Silence Unknown Callers (no stream in the server's events, pactl subscribe); the next call that does ring plays")
    func quietWhenItShouldBe() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        let events = try await sound.events()
        #expect(try await Self.setManager(daemon, "DoNotDisturb", true).status == 0)
        await #expect(throws: DBusError.self) { try await app.reportIncoming("alice") }
        #expect(try await Self.setManager(daemon, "DoNotDisturb", false).status == 0)
        #expect(try await Self.setManager(daemon, "SilenceUnknownCallers", true).status == 0)
        await #expect(throws: DBusError.self) { try await app.reportIncoming("bob") }
        #expect(try await Self.setManager(daemon, "SilenceUnknownCallers", false).status == 0)
        // Refused on the spot, they left nothing to ring later: no stream so far.
        #expect(events.appeared.isEmpty, "a filtered call rang: \(events.appeared)")
        _ = try await app.reportIncoming("carol")
        let shown = try #require(await server.notified.next { $0.summary == "Incoming call" })
        #expect(shown.body.contains("carol"), "a silenced call rang on screen: \(shown.body)")
        #expect(try await sound.waitForStream(where: Self.isRing) != nil, "carol did not ring")
    }

    @Test("while a call is up, a ringing call plays the short call-waiting tone, again after a pause, never the ringtone; when the other call ends the ringtone takes over")
    func callWaitingTone() async throws {
        let sound = try await SoundServer()
        let (daemon, server, app) = try await Self.rig(sound)
        defer { withExtendedLifetime(server) {} }
        let events = try await sound.events()
        let first = try await app.reportIncoming("alice")
        #expect(try await sound.waitForStream(where: Self.isRing) != nil)
        try await Self.control(daemon, "AnswerCall", first)
        _ = try await app.perform("answer")
        #expect(try await sound.waitForSilence(where: Self.isRing))
        _ = try await app.reportIncoming("bob")
        let isTone = { (stream: SoundServer.Stream) in Self.isRing(stream) && stream.properties["media.name"] == "message-new-instant" }
        let tone = try #require(try await sound.waitForStream(where: isTone), "no call-waiting tone: \(daemon.daemon.output)")
        #expect(tone.properties["event.description"] == "Call waiting" && tone.properties["application.name"] == "Monkey", "\(tone)")
        // Over the conversation it is short, and quiet between two (the server's own events, not a poll).
        #expect(await events.removed(tone.index), "the call-waiting tone did not end")
        #expect(await events.new(after: tone.index) != nil, "the call-waiting tone did not come again")
        #expect(try await sound.streams().allSatisfy { $0.properties["media.name"] != "phone-incoming-call" })
        // The call that was up ends: now a plain ring.
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])
        let ring = try #require(try await sound.waitForStream { Self.isRing($0) && $0.properties["media.name"] == "phone-incoming-call" })
        #expect(ring.properties["event.description"] == "Incoming call", "\(ring)")
    }

    @Test("a sound server that dies mid-ring: the call still answers, one warning, and a server started again rings the next call; a damaged or huge ringtone file rings the default")
    func serverDiesAndBadFiles() async throws {
        let sound = try await SoundServer()
        let folder = sound.folder.appendingPathComponent("sounds")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let damaged = folder.appendingPathComponent("damaged.oga")
        try Data("OggS this is no ogg vorbis".utf8).write(to: damaged)
        let huge = folder.appendingPathComponent("huge.oga")
        FileManager.default.createFile(atPath: huge.path, contents: nil)
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 17 << 20)  // sparse: 17 MiB past the 16 MiB bound, nothing written
        try handle.close()
        let (daemon, server, app) = try await Self.rig(sound, configuration: ["RingtoneSound": .string(damaged.path)])
        defer { withExtendedLifetime(server) {} }
        let first = try await app.reportIncoming("alice")
        let fallback = try #require(try await sound.waitForStream(where: Self.isRing), "the damaged file rang nothing: \(daemon.daemon.output)")
        #expect(fallback.properties["media.name"] == "phone-incoming-call", "\(fallback)")
        sound.kill()
        try await Self.control(daemon, "AnswerCall", first)
        _ = try await app.perform("answer")
        try await app.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])
        #expect(await daemon.daemon.waitForOutput(containing: "cannot ring"), "\(daemon.daemon.output)")

        let restarted = try await SoundServer(socket: sound.socket)
        let big = try await TestProvider(bus: daemon.bus, name: "Big", configuration: ["RingtoneSound": .string(huge.path)])
        _ = try await big.reportIncoming("bob")
        let ring = try #require(try await restarted.waitForStream(where: Self.isRing), "the server started again did not ring: \(daemon.daemon.output)")
        #expect(ring.properties["media.name"] == "phone-incoming-call", "\(ring)")
        #expect(daemon.daemon.output.contains("larger than 16 MiB"), "\(daemon.daemon.output)")
        #expect(daemon.daemon.output.components(separatedBy: "cannot ring").count == 2, "one warning: \(daemon.daemon.output)")
    }

    /// A FIFO at `path`, made elsewhere and renamed into place (as an app swaps a file).
    static func fifo(at path: String) throws {
        let made = path + ".fifo-\(UUID().uuidString.prefix(8))"
        guard mkfifo(made, 0o644) == 0, rename(made, path) == 0 else { throw TestSupportError("mkfifo \(path): \(String(cString: strerror(errno)))") }
    }

    /// Another app's call while the first rings: its notification must come within the deadline.
    static func otherAppIsShown(_ daemon: RunningDaemon, _ server: NotificationServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let other = try await TestProvider(bus: daemon.bus, name: "Other", configuration: [:])
        let reported = ContinuousClock.now
        // Reported from a task: before the fix, the daemon's reply could wait behind the stalled thread too.
        let report = Task { try await other.reportIncoming("bob") }
        let shown = await server.notified.next(timeout: .seconds(10)) { $0.body.contains("bob") }
        #expect(shown != nil, "another app's incoming call got no notification within 10 s: \(daemon.daemon.output)", sourceLocation: sourceLocation)
        if shown != nil { print("ring: the other app's call shown \(ContinuousClock.now - reported) after it was reported") }
        report.cancel()
    }

    @Test("an app's RingtoneSound naming a FIFO in the user's sound theme (~/.local/share/sounds) rings the default, and another app's call still gets its notification (issue 53: libcanberra opened the FIFO on the thread that shows calls)")
    func fifoInTheSoundTheme() async throws {
        let sound = try await SoundServer()
        let data = sound.folder.appendingPathComponent("data")
        let stereo = data.appendingPathComponent("sounds/freedesktop/stereo")
        try FileManager.default.createDirectory(at: stereo, withIntermediateDirectories: true)
        for name in ["evil-fifo.oga", "evil-wav.wav"] { try Self.fifo(at: stereo.appendingPathComponent(name).path) }
        let daemon = try await RunningDaemon(["--ring-timeout", "600"], environment: sound.environment.merging(["XDG_DATA_HOME": data.path]) { $1 })
        let server = try await NotificationServer(address: daemon.bus.address)
        let evil = try await TestProvider(bus: daemon.bus, name: "Evil", configuration: ["RingtoneSound": .string("evil-fifo")])
        let first = try await evil.reportIncoming("mallory")
        let fallback = try await sound.waitForStream(timeout: .seconds(10), where: Self.isRing)
        #expect(fallback?.properties["media.name"] == "phone-incoming-call", "the FIFO's call did not ring the default: \(String(describing: fallback)) \(daemon.daemon.output)")
        try await Self.otherAppIsShown(daemon, server)
        #expect(daemon.daemon.output.contains("evil-fifo.oga is not a regular file"), "\(daemon.daemon.output)")
        // A .wav FIFO, with the name's -part dropped as the theme's lookup does ("evil-wav-call" → "evil-wav").
        try await evil.call("ReportCallEnded", [.string(first), .string("remote-ended"), .uint64(0)])
        let wav = try await TestProvider(bus: daemon.bus, name: "Wav", configuration: ["RingtoneSound": .string("evil-wav-call")])
        _ = try await wav.reportIncoming("trudy")
        #expect(await daemon.daemon.waitForOutput(containing: "evil-wav.wav is not a regular file"), "\(daemon.daemon.output)")
        try await Self.otherAppIsShown(daemon, server)
    }

    @Test("a host app's ringtone file swapped for a FIFO during the ring: the ring plays on from the file it checked, and another app's call still gets its notification (issue 53: checked before the first play only, then opened by path on every loop)")
    func ringtoneSwappedForAFIFO() async throws {
        let sound = try await SoundServer()
        let folder = sound.folder.appendingPathComponent("ringtones")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ringtone = folder.appendingPathComponent("ring.oga").path
        // About a second long: the ring loops soon after the swap.
        try FileManager.default.copyItem(atPath: "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga", toPath: ringtone)
        let (daemon, server, app) = try await Self.rig(sound, configuration: ["RingtoneSound": .string(ringtone)])
        let events = try await sound.events()
        _ = try await app.reportIncoming("alice")
        let first = try #require(try await sound.waitForStream(where: Self.isRing), "nothing rang: \(daemon.daemon.output)")
        try await Task.sleep(for: .milliseconds(200))
        try Self.fifo(at: ringtone)
        // The first play ends; the next loop plays the file that was checked, not the FIFO now at its path.
        #expect(await events.removed(first.index), "the first play did not end")
        let again = await events.new(after: first.index, timeout: .seconds(10))
        #expect(again != nil, "the ring did not loop after the swap: \(daemon.daemon.output)")
        try await Self.otherAppIsShown(daemon, server)
    }
}

@Suite("The sound theme's lookup, done by the ringer rather than libcanberra")
struct SoundThemeTests {
    @Test("XDG_DATA_HOME, then each absolute folder of XDG_DATA_DIRS, theme freedesktop, stereo, .oga .ogg .wav; then the name without its last -part; a name that is not one path component finds nothing")
    func candidates() {
        let found = Array(SoundTheme.candidates(for: "phone-incoming", dataHome: "/home/u/.local/share", dataDirectories: "/usr/share:relative:/opt/share"))
        let expected = ["phone-incoming", "phone"].flatMap { name in
            ["/home/u/.local/share", "/usr/share", "/opt/share"].flatMap { folder in
                [".oga", ".ogg", ".wav"].map { "\(folder)/sounds/freedesktop/stereo/\(name)\($0)" }
            }
        }
        #expect(found == expected)
        #expect(SoundTheme.folders(dataHome: "relative", dataDirectories: nil) == ["/usr/local/share", "/usr/share"])
        #expect(SoundTheme.folders(dataHome: nil, dataDirectories: "") == ["/usr/local/share", "/usr/share"])
        for bad in ["", ".", "..", "../../etc/passwd", "a/b", "/dev/zero"] {
            #expect(Array(SoundTheme.candidates(for: bad, dataHome: "/h", dataDirectories: "/d")).isEmpty, "\(bad)")
        }
        #expect(Array(SoundTheme.candidates(for: "-x", dataHome: nil, dataDirectories: "/d")).count == 3, "a leading dash is no -part")
    }
}
