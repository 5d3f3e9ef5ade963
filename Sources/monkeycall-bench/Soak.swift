import CallHistory
import DBus
import Foundation
import MonkeyCallAPI

/// The soak: the lifecycle benchmark run for a long time across many
/// providers, against a daemon with its default flood guard, watching for
/// memory growth and for anything lost on the way.
enum Soak {
    static let reportEvery: Duration = .seconds(10)

    /// The growth is measured from the first sample at a tenth of the run: by
    /// then SQLite's page cache (2 MiB) and the heap have settled, and a leak
    /// still shows in the nine tenths that follow.
    static let settledFraction = 10

    static func run(_ daemon: DaemonUnderTest, providers: Int, lifecycles: Int) async throws -> String {
        let idle = try daemon.residentBytes()
        let tally = LifecycleTally()
        let reporter = Task { await report(daemon, tally, of: lifecycles) }
        defer { reporter.cancel() }
        var warm = 0
        progress("soak: \(lifecycles) call lifecycles over \(providers) providers, after \(Lifecycles.warmUp(providers)) to warm up")
        let result = try await Lifecycles.measure(address: daemon.address, providerCount: providers, count: lifecycles, tally: tally) {
            warm = try daemon.residentBytes()
        }
        reporter.cancel()
        let atEnd = try daemon.residentBytes()
        let settled = await reporter.value ?? (lifecycles, atEnd)

        // Nothing lost: no call left alive, every lifecycle in Recents.
        let left = try await liveCalls(daemon)
        let expected = lifecycles + Lifecycles.warmUp(providers)
        let history = try CallHistory(path: daemon.dataHome.appendingPathComponent("monkeycall/monkeycall.sqlite").path, recentsLimit: expected)
        let recorded = try history.recentsCount()
        func growth(from start: Int) -> String { String(format: "%+.1f%%", Double(atEnd - start) / Double(start) * 100) }
        return """
            soak: \(result.count) call lifecycles over \(providers) providers in \(fixed(result.elapsed.seconds, 0)) s: \
            \(fixed(result.perSecond, 0)) lifecycles/s
            daemon RSS: \(mebibytes(idle)) idle, \(mebibytes(warm)) after the warm-up, \(mebibytes(settled.rss)) after \(settled.count) lifecycles, \
            \(mebibytes(atEnd)) at the end
            RSS growth: \(growth(from: settled.rss)) from \(settled.count) lifecycles to the end (target under 5%); \(growth(from: warm)) from the warm-up
            lost: \(left) calls still alive, \(max(0, expected - recorded)) of \(expected) Recents entries missing
            requests refused by a limit (LimitsExceeded) and tried again: \(tally.counts.throttled)
            """
    }

    /// Every `reportEvery`: how far, how fast lately, and the daemon's RSS.
    /// Returns the first sample taken at or after a tenth of the run.
    private static func report(_ daemon: DaemonUnderTest, _ tally: LifecycleTally, of total: Int) async -> (count: Int, rss: Int)? {
        var last = (count: 0, at: ContinuousClock.now)
        var settled: (count: Int, rss: Int)?
        while (try? await Task.sleep(for: reportEvery)) != nil {
            let now = ContinuousClock.now, done = tally.counts.completed
            let rate = Double(done - last.count) / (now - last.at).seconds
            let rss = try? daemon.residentBytes()
            if settled == nil, done * settledFraction >= total, let rss { settled = (done, rss) }
            progress("soak: \(done) of \(total) lifecycles, \(fixed(rate, 0))/s over the last \(reportEvery), RSS \(rss.map(mebibytes) ?? "?")")
            last = (done, now)
        }
        return settled
    }

    private static func liveCalls(_ daemon: DaemonUnderTest) async throws -> Int {
        let connection = try Connection(address: daemon.address)
        defer { connection.close() }
        let reply = try await connection.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { throw BenchError("GetManagedObjects returned no dictionary") }
        let calls = Telephony1.callRoot.rawValue + "/"
        return objects.count { if case .objectPath(let path) = $0.key { path.rawValue.hasPrefix(calls) } else { false } }
    }
}
