import DBus
import DBusTestSupport
import Foundation
import Glibc
import MonkeyCallAPI
import Synchronization

struct StallResult {
    let entries: Int
    /// `Properties.Get(Manager, Version)` on the idle daemon, just before.
    let idle: Samples
    /// The Gets sent while `Complete` ran, until its reply came.
    let during: Samples
    let completeSeconds: Double
    /// Pings to dbus-daemon itself over the same window, from another connection: what the machine
    /// does to a round trip that never reaches monkeycalld (the noise under the figures above).
    let busPings: Samples
    var slowest: Double { during.sorted.last ?? 0 }
    var ratio: Double { slowest / idle.median }
}

struct LockResult {
    let lockSeconds: Double
    /// From the unlock to the probe call's EntryAdded; nil: not announced within `patience` of the unlock.
    let probeAfterUnlock: Double?
    /// Full call lifecycles (report, answer, fulfil, end, fulfil) completed while the lock was held.
    let callsDuringLock: Int
    /// Calls ended during the lock and after it (until the lifecycles stopped), probe included.
    let ended: Int
    /// EntryAdded heard for them, before and after the unlock.
    let announcedDuringLock: Int
    let announcedAfter: Int
    /// From the unlock to the last of them.
    let lastAfterUnlock: Double?
    static let patience: Double = 10
}

/// Whether the service's queue waits on a disk: `Properties.Get` answered
/// while a large call directory completes, and calls going on while another
/// process holds the Recents database locked.
enum QueuePhase {
    /// A provider's directory of `perKind` blocking and `perKind` identification entries, sent,
    /// then completed while another connection sends Gets one after another.
    static func stall(address: String, perKind: Int, iterations: Int) async throws -> StallResult {
        let app = try Connection(address: address)
        defer { app.close() }
        let provider = try await app.registerProvider("Stall")
        // Complete is timed on the last update: it writes the directory with everything before it.
        let update = try await DirectoryPhase.loadAllButLastComplete(app, provider: provider, DirectoryLoad(perKind: perKind))

        let prober = try Connection(address: address)
        defer { prober.close() }
        let clock = ContinuousClock()
        func get() async throws -> Double {
            let start = clock.now
            _ = try await prober.version()
            return (clock.now - start).microseconds
        }
        for _ in 0..<max(100, iterations / 10) { _ = try await get() }
        var idle: [Double] = []
        for _ in 0..<iterations { idle.append(try await get()) }

        let done = Latch()
        let completing = Task {
            defer { done.set() }
            let start = clock.now
            try await app.telephony(Telephony1.CallDirectoryUpdate.complete, at: update)
            return (clock.now - start).seconds
        }
        let control = try Connection(address: address)
        defer { control.close() }
        let pinging = Task {
            var pings: [Double] = []
            while !done.isSet {
                let start = clock.now
                try await control.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping")
                pings.append((clock.now - start).microseconds)
            }
            return pings
        }
        var during: [Double] = []
        while !done.isSet { during.append(try await get()) }
        let seconds = try await completing.value
        return StallResult(entries: 2 * perKind, idle: Samples(idle), during: Samples(during), completeSeconds: seconds,
                           busPings: Samples(try await pinging.value))
    }

    /// Another process takes the database's write lock (`BEGIN EXCLUSIVE`, as `sqlite3` in a
    /// terminal or a backup tool would) and holds it for `seconds`. Meanwhile a probe call ends
    /// (its entry must wait for the lock), then `providers` apps run call lifecycles until the lock goes.
    static func lock(_ service: DaemonUnderTest, seconds: Double = 4, providers: Int = 4) async throws -> LockResult {
        let database = service.dataHome.appendingPathComponent("monkeycall/monkeycall.sqlite").path
        let arrivals = Arrivals()
        let watcher = try Connection(address: service.address)
        defer { watcher.close() }
        let subscription = try await watcher.subscribe(Telephony1.Recents.entryAdded.matchRule) { message in
            if case .string(let uuid)? = (try? message.arguments())?.first?.vardict?[Telephony1.Key.callUUID] { arrivals.add(uuid) }
        }
        defer { subscription.cancel() }
        try await watcher.subscribeToTelephony()  // Recents entries go to subscribers only
        let app = try Connection(address: service.address)
        defer { app.close() }
        let path = try await app.registerProvider("Probe")

        let script = """
            import sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
            connection.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
            connection.execute("COMMIT")
            print("unlocked %.6f" % time.monotonic(), flush=True)
            """
        let locker = try ChildProcess("/usr/bin/python3", ["-c", script, database, "\(seconds)"])
        defer { locker.kill() }
        guard await locker.waitForOutput(containing: "locked\n") else { throw BenchError("python3 could not lock \(database): \(locker.output)") }

        let probe = UUID().uuidString.lowercased()
        _ = try await app.telephony(Telephony1.Provider.reportNewIncomingCall, try UUID.bench(probe), CallUpdate(handle: Handle(value: "probe")), at: path)
        try await app.telephony(Telephony1.Provider.reportCallEnded, try UUID.bench(probe), EndReason.remoteEnded.rawValue, 0, at: path)

        let tally = LifecycleTally()
        let unlocked = Latch()
        let counted = Task { () -> Int in
            _ = await locker.waitForOutput(containing: "unlocked", timeout: .seconds(seconds + 30))
            unlocked.set()
            return tally.counts.completed
        }
        try await Lifecycles.run(address: service.address, providerCount: providers, tally: tally) { !unlocked.isSet }
        let callsDuringLock = await counted.value
        guard let line = locker.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("unlocked ") }),
              let unlock = Double(line.dropFirst("unlocked ".count)) else {
            throw BenchError("the lock was not released: \(locker.output)")
        }
        let ended = tally.counts.completed + 1
        let deadline = unlock + LockResult.patience
        while arrivals.count < ended && monotonicSeconds() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let times = arrivals.times
        return LockResult(lockSeconds: seconds, probeAfterUnlock: times[probe].map { $0 - unlock }, callsDuringLock: callsDuringLock, ended: ended,
                          announcedDuringLock: times.values.filter { $0 < unlock }.count, announcedAfter: times.values.filter { $0 >= unlock }.count,
                          lastAfterUnlock: times.values.max().map { $0 - unlock })
    }

    static func render(_ stall: StallResult, _ lock: LockResult) -> [String] {
        var table = Table(["service queue", "value"])
        table.add(["Properties.Get idle (\(stall.idle.sorted.count)): median / p99 / slowest",
                   "\(fixed(stall.idle.median, 1)) / \(fixed(stall.idle.percentile(99), 1)) / \(fixed(stall.idle.sorted.last ?? 0, 1)) µs"])
        table.add(["Get while the update completes that brings a directory to \(stall.entries) entries (\(stall.during.sorted.count)): median / p99",
                   "\(fixed(stall.during.median, 1)) / \(fixed(stall.during.percentile(99), 1)) µs"])
        table.add(["slowest of those Gets", fixed(stall.slowest, 1) + " µs = \(fixed(stall.ratio, 1)) × the idle median (target <= 20)"])
        table.add(["meanwhile, Ping to dbus-daemon itself (\(stall.busPings.sorted.count)): median / p99 / slowest",
                   "\(fixed(stall.busPings.median, 1)) / \(fixed(stall.busPings.percentile(99), 1)) / \(fixed(stall.busPings.sorted.last ?? 0, 1)) µs"])
        table.add(["Complete of that update", fixed(stall.completeSeconds, 2) + " s"])
        table.add(["a call ended while another process held Recents locked \(fixed(lock.lockSeconds, 0)) s",
                   lock.probeAfterUnlock.map { "recorded \(fixed($0 * 1000, 0)) ms after the unlock" }
                       ?? "never recorded (nothing within \(fixed(LockResult.patience, 0)) s of the unlock)"])
        table.add(["call lifecycles completed during the lock", "\(lock.callsDuringLock)"])
        table.add(["calls ended / announced in Recents during the lock / after it", "\(lock.ended) / \(lock.announcedDuringLock) / \(lock.announcedAfter)"
                   + (lock.lastAfterUnlock.map { ", the last \(fixed($0 * 1000, 0)) ms after the unlock" } ?? "")])
        return table.render()
    }
}

/// `CLOCK_MONOTONIC`, which Python's `time.monotonic()` reads too.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// When each call's EntryAdded arrived.
final class Arrivals: Sendable {
    private let seen = Mutex<[String: Double]>([:])
    func add(_ uuid: String) {
        let now = monotonicSeconds()
        seen.withLock { if $0[uuid] == nil { $0[uuid] = now } }
    }
    var count: Int { seen.withLock { $0.count } }
    var times: [String: Double] { seen.withLock { $0 } }
}

final class Latch: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
