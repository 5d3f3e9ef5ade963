import CallHistory
import DBus
import Foundation
import MonkeyCallAPI

/// The soak: the lifecycle benchmark run for a long time across many
/// providers, against a daemon with its default flood guard, watching for
/// memory growth and for anything lost on the way.
enum Soak {
    static let reportEvery: Duration = .seconds(10)

    static func run(_ daemon: DaemonUnderTest, providers: Int, lifecycles: Int) async throws -> String {
        let idle = try daemon.residentBytes()
        let tally = LifecycleTally()
        let reporter = Task { await report(daemon, tally, of: lifecycles) }
        defer { reporter.cancel() }
        var atStart = 0
        progress("soak: \(lifecycles) call lifecycles over \(providers) providers, after \(Lifecycles.warmUp(providers)) to warm up")
        let result = try await Lifecycles.measure(address: daemon.address, providerCount: providers, count: lifecycles, tally: tally) {
            atStart = try daemon.residentBytes()
        }
        reporter.cancel()
        let atEnd = try daemon.residentBytes()

        // Nothing lost: no call left alive, every lifecycle in Recents.
        let left = try await liveCalls(daemon)
        let history = try CallHistory(path: daemon.dataHome.appendingPathComponent("monkeycall/monkeycall.sqlite").path)
        let recorded = try history.recentsCount()
        let expected = lifecycles + Lifecycles.warmUp(providers)
        let growth = Double(atEnd - atStart) / Double(atStart) * 100
        return """
            soak: \(result.count) call lifecycles over \(providers) providers in \(fixed(result.elapsed.seconds, 0)) s: \
            \(fixed(result.perSecond, 0)) lifecycles/s
            daemon RSS: \(mebibytes(idle)) idle, \(mebibytes(atStart)) after the warm-up, \(mebibytes(atEnd)) at the end: \
            \(String(format: "%+.1f", growth))% (target under 5%)
            lost: \(left) calls still alive, \(max(0, expected - recorded)) of \(expected) Recents entries missing
            refused by the flood guard and tried again: \(tally.counts.throttled)
            """
    }

    /// Every `reportEvery`: how far, how fast lately, and the daemon's RSS.
    private static func report(_ daemon: DaemonUnderTest, _ tally: LifecycleTally, of total: Int) async {
        var last = (count: 0, at: ContinuousClock.now)
        while (try? await Task.sleep(for: reportEvery)) != nil {
            let now = ContinuousClock.now, done = tally.counts.completed
            let rate = Double(done - last.count) / (now - last.at).seconds
            let rss = (try? daemon.residentBytes()).map(mebibytes) ?? "?"
            progress("soak: \(done) of \(total) lifecycles, \(fixed(rate, 0))/s over the last \(reportEvery), RSS \(rss)")
            last = (done, now)
        }
    }

    private static func liveCalls(_ daemon: DaemonUnderTest) async throws -> Int {
        let connection = try Connection(address: daemon.address)
        defer { connection.close() }
        let reply = try await connection.telephony("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { throw BenchError("GetManagedObjects returned no dictionary") }
        let calls = Telephony1.rootPath.appending("Call").rawValue + "/"
        return objects.count { if case .objectPath(let path) = $0.key { path.rawValue.hasPrefix(calls) } else { false } }
    }
}
