import DBusTestSupport
import Foundation
import Testing

/// monkeycall-baresip waits for SIP and the desktop without waking: its work runs on its queues
/// and MonkeyCallKit's executor, never on Swift concurrency's global one (whose first job starts
/// libdispatch's once-a-second worker-pool monitor).
@Suite("monkeycall-baresip idle", .enabled(if: Baresip.path != nil, Baresip.skipMessage))
struct BridgeIdleTests {
    @Test("after a real SIP call, the idle bridge wakes at most 3 times in 30 s", .enabled(if: !Deadlines.underThreadSanitizer))
    func bridgeStaysQuiet() async throws {
        let rig = try await SIPRig()
        let uuid = try await rig.answeredCall()
        rig.remote.send(.hangup)
        _ = try await rig.endedEntry(uuid)
        let bridge = try #require(rig.bridge)

        // libdispatch lets its idle worker threads go after 5 s: a measurement's wait, as for the daemon.
        try await Task.sleep(for: WakeUps.settle)
        let wakeUps = try await WakeUps.count(of: bridge.pid, over: WakeUps.idleWindow)
        print("idle monkeycall-baresip: \(wakeUps)")
        #expect(wakeUps.total <= 3, "\(wakeUps)")
    }
}
