import DBusTestSupport
import Foundation

/// The Phone app (issue 42) against the smallest libadwaita window started the same way
/// (`monkeycall-phone-baseline`), under the same Xvfb, on the daemon's private bus, in alternating
/// rounds: from spawning each to its first frame drawn; then both left open with no call, their
/// wake-ups over the idle window and their RSS.
enum PhonePhase {
    /// One program's figures, the app's or the minimal window's: measured the same way for both.
    struct Program {
        /// From spawning it to its first frame, µs.
        let start: Samples
        /// Left open with no call.
        let idle: IdleResult
    }

    struct Result {
        let app: Program
        let baseline: Program
        var startRatio: Double { app.start.median / baseline.start.median }
        var residentAbove: Int { app.idle.residentBytes - baseline.idle.residentBytes }
    }

    static func measure(executable: String, options: [String], rounds: Int, idleWindow: Duration) async throws -> Result {
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        let app = folder.appendingPathComponent("monkeycall-phone").path
        let baseline = folder.appendingPathComponent("monkeycall-phone-baseline").path
        for program in [app, baseline] where !FileManager.default.isExecutableFile(atPath: program) {
            throw BenchError("no \(program); build it with `scripts/build-release monkeycall-phone monkeycall-phone-baseline`")
        }
        let display = try await VirtualDisplay.start()
        defer { display.server.kill() }
        return try await DaemonUnderTest.running(executable: executable, options: options) { daemon in
            try await measure(app: app, baseline: baseline, on: daemon, display: display, rounds: rounds, idleWindow: idleWindow)
        }
    }

    private static func measure(app: String, baseline: String, on daemon: DaemonUnderTest, display: VirtualDisplay,
                                rounds: Int, idleWindow: Duration) async throws -> Result {
        var environment = daemon.bus.environment
        environment["DISPLAY"] = display.name
        environment["GDK_BACKEND"] = "x11"
        environment["MONKEYCALL_PHONE_REPORT_FRAME"] = "1"
        // As on a desktop without an accessibility bus: no AT-SPI bridge to look for.
        environment["NO_AT_BRIDGE"] = "1"
        environment["GSETTINGS_BACKEND"] = "memory"

        progress("the Phone app: \(rounds) cold starts to the first frame, alternating with a minimal libadwaita window")
        // By program path: the minimal window first in each round.
        var starts: [String: [Double]] = [:]
        for round in 0..<(rounds + 1) {
            for program in [baseline, app] {
                let (started, process) = try await start(program, environment: environment)
                process.terminate()
                _ = await process.waitForExit()
                // The first round warms the file cache for both.
                guard round > 0 else { continue }
                starts[program, default: []].append(started.microseconds)
            }
        }

        progress("the Phone app: idle \(idleWindow) with its window open and no call, and the minimal window's")
        let (_, openBaseline) = try await start(baseline, environment: environment)
        let baselineIdle = try await IdlePhase.measure(pid: openBaseline.pid, settle: .seconds(2), window: idleWindow)
        openBaseline.terminate()
        let (_, openApp) = try await start(app, environment: environment)
        let appIdle = try await IdlePhase.measure(pid: openApp.pid, settle: .seconds(2), window: idleWindow)
        openApp.terminate()
        _ = await openBaseline.waitForExit()
        _ = await openApp.waitForExit()
        return Result(app: Program(start: Samples(starts[app, default: []]), idle: appIdle),
                      baseline: Program(start: Samples(starts[baseline, default: []]), idle: baselineIdle))
    }

    /// Spawns `program` and waits for its first frame: the time from spawning to it.
    private static func start(_ program: String, environment: [String: String]) async throws -> (Duration, ChildProcess) {
        let began = ContinuousClock.now
        let process = try ChildProcess(program, [], environment: environment)
        guard await process.waitForOutput(containing: "first frame", timeout: .seconds(60)) else {
            process.kill()
            throw BenchError("\(program) drew no frame within 60 s: \(process.output.suffix(2000))")
        }
        return (ContinuousClock.now - began, process)
    }

    static func render(_ result: Result) -> [String] {
        [
            "the Phone app against a minimal libadwaita window started the same way (\(result.app.start.sorted.count) cold starts each)",
            "  start → first frame   app median \(milliseconds(result.app.start.median, 0)), minimal \(milliseconds(result.baseline.start.median, 0)):"
                + " ratio \(fixed(result.startRatio, 2)) (target ≤ 1.5)",
            "  idle, window open     app \(result.app.idle.total) wake-ups in \(result.app.idle.window), minimal \(result.baseline.idle.total) (target: app 0)",
            "                        app by thread: " + result.app.idle.kinds.map { "\($0.kind) ×\($0.threads) \($0.switches)" }.joined(separator: ", "),
            "  RSS, window open      app \(mebibytes(result.app.idle.residentBytes)), minimal \(mebibytes(result.baseline.idle.residentBytes)):"
                + " \(mebibytes(result.residentAbove)) above (target ≤ 20 MiB)",
        ]
    }
}
