import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI

/// The ring (issue 40) on a real PulseAudio server: from the user's `AnswerCall` to the ringtone's
/// stream gone from the server, against a `Peer.Ping` in the same round (the app fulfils the answer
/// at once, as the bench's providers do); and what ringing costs the idle daemon: its wake-ups and
/// RSS before any ring, then again after the rounds (the sound library is loaded at the first ring).
enum RingPhase {
    struct Result {
        let silence: Samples
        let ping: Samples
        let before: IdleResult
        let after: IdleResult
        var ratio: Double { silence.median / ping.median }
        var residentGrowth: Int { after.residentBytes - before.residentBytes }
    }

    static func measure(executable: String, options: [String], rounds: Int, idleWindow: Duration) async throws -> Result {
        let sound = try await SoundServer()
        return try await DaemonUnderTest.running(executable: executable, options: options, environment: sound.environment) { daemon in
            try await measure(daemon, sound, rounds: rounds, idleWindow: idleWindow)
        }
    }

    private static func measure(_ daemon: DaemonUnderTest, _ sound: SoundServer, rounds: Int, idleWindow: Duration) async throws -> Result {
        progress("the ring: idle \(idleWindow) before any ring")
        let before = try await IdlePhase.measure(daemon, settle: .seconds(2), window: idleWindow)
        let events = try await sound.events()
        let rendezvous = Rendezvous()
        let app = try await BenchProvider(address: daemon.address, name: "Ring", rendezvous: rendezvous)
        let user = try Connection(address: daemon.address)
        defer { user.close() }

        progress("the ring: \(rounds) calls rung and answered, Answer → the ringtone's stream gone")
        let warmUp = 3
        var silences: [Double] = [], pings: [Double] = []
        var newest = -1
        for round in 0..<(warmUp + rounds) {
            let uuid = UUID().uuidString.lowercased()
            let pinged = ContinuousClock.now
            _ = try await user.ping(Telephony1.busName)
            let ping = ContinuousClock.now - pinged
            try await app.reportIncoming(uuid, handle: "caller\(round)")
            guard let stream = await events.new(after: newest) else { throw BenchError("call \(round) rang nothing on the sound server within 20 s") }
            newest = stream
            let answered = ContinuousClock.now
            _ = try await user.telephony(Telephony1.CallController.answerCall, uuid)
            guard await events.removed(stream) else { throw BenchError("the ringtone of call \(round) still played 20 s after Answer") }
            if round >= warmUp {
                silences.append((ContinuousClock.now - answered).microseconds)
                pings.append(ping.microseconds)
            }
            try await app.connection.telephony(Telephony1.Provider.reportCallEnded, try UUID.bench(uuid), EndReason.remoteEnded.rawValue, 0, at: app.path)
        }
        app.close()
        progress("the ring: idle \(idleWindow) after \(warmUp + rounds) rings")
        let after = try await IdlePhase.measure(daemon, settle: .seconds(2), window: idleWindow)
        return Result(silence: Samples(silences), ping: Samples(pings), before: before, after: after)
    }

    static func render(_ result: Result) -> [String] {
        [
            "the ring, on a real PulseAudio server (\(result.silence.sorted.count) calls)",
            "  Answer → ringtone stream gone   median \(milliseconds(result.silence.median, 1))  p90 \(milliseconds(result.silence.percentile(90), 1))"
                + "  (target: median ≤ 150 ms)",
            "  Peer.Ping in the same rounds    median \(fixed(result.ping.median, 0)) µs  ratio \(fixed(result.ratio, 0))",
            "  idle before any ring            \(result.before.total) wake-ups in \(result.before.window), RSS \(mebibytes(result.before.residentBytes))"
                + " (anonymous \(mebibytes(result.before.anonymousBytes)))",
            "  idle after the rings            \(result.after.total) wake-ups in \(result.after.window), RSS \(mebibytes(result.after.residentBytes))"
                + " (anonymous \(mebibytes(result.after.anonymousBytes))): \(result.residentGrowth >= 0 ? "+" : "")\(mebibytes(result.residentGrowth)),"
                + " the sound libraries loaded at the first ring and the calls' own (targets: 0 wake-ups; the sound library costs nothing before a ring)",
        ]
    }
}
