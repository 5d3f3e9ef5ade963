import DBus
import DBusTestSupport
import Foundation
import Testing

/// Programs built on MonkeyCallKit, and `monkeycall watch`, wake no one when nothing happens: their
/// tasks run on serial executors, so libdispatch's worker-pool monitor (a wake-up a second for
/// the rest of the process, started by the first job on Swift concurrency's global executor or a
/// `.global()` queue) never starts. Before, an idle monkeycall-demo woke 34 times in 30 s.
@Suite("Client programs idle at 0")
struct ClientIdleTests {
    @Test("after a call, an idle MonkeyCallKit app (monkeycall-demo) and monkeycall watch each wake at most 3 times in 30 s",
          .enabled(if: !Deadlines.underThreadSanitizer))
    func demoAndWatchStayQuiet() async throws {
        let setup = try await DemoSetup(["--connect-after", "0.1", "--connected-after", "0.1"])
        let watch = try ChildProcess(BuiltProducts.path("monkeycall"), ["watch"], environment: setup.bus.environment)
        defer { watch.kill() }
        #expect(await watch.waitForOutput(containing: "watching"), "\(watch.output)")

        let dial = try await setup.cli("dial", "alice")
        #expect(dial.status == 0, "\(dial.stderr)")
        #expect(await setup.demo.waitForOutput(containing: "The call to alice is connected."), "\(setup.demo.output)")
        #expect(try await setup.cli("end").status == 0)
        #expect(await setup.demo.waitForOutput(containing: "The call with alice ended."), "\(setup.demo.output)")
        let uuid = dial.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await watch.waitForOutput(containing: "call \(uuid) ended"), "\(watch.output)")

        // libdispatch lets its idle worker threads go after 5 s: a measurement's wait, not a synchronisation.
        try await Task.sleep(for: WakeUps.settle)
        async let demo = WakeUps.count(of: setup.demo.pid, over: WakeUps.idleWindow)
        async let watcher = WakeUps.count(of: watch.pid, over: WakeUps.idleWindow)
        let (demoWakeUps, watchWakeUps) = try await (demo, watcher)
        print("idle monkeycall-demo: \(demoWakeUps); idle monkeycall watch: \(watchWakeUps)")
        #expect(demoWakeUps.total <= 3, "monkeycall-demo: \(demoWakeUps)")
        #expect(watchWakeUps.total <= 3, "monkeycall watch: \(watchWakeUps)")
    }
}
