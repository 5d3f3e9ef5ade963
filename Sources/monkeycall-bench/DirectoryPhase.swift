import DBus
import DBusTestSupport
import Foundation
import CallDirectory
import MonkeyCallAPI

struct DirectoryResult {
    let entries: Int
    /// The updates the load took: one complete, the rest incremental.
    let updates: Int
    let loadSeconds: Double
    let noopSeconds: Double
    let residentGrowth: Int
    let identify: Samples
    let ping: Samples
    let startToIdentify: Double
    var loadRatio: Double { noopSeconds / loadSeconds }
    var bytesPerEntry: Double { Double(residentGrowth) / Double(entries) }
}

/// A call directory of `perKind` blocking and `perKind` identification
/// entries: loaded through D-Bus against the same bytes sent to a method that
/// does nothing (Peer.Ping ignores its arguments), the daemon's memory per
/// entry, Identify against Ping, and a fresh daemon's time to a correct Identify.
enum DirectoryPhase {
    static let batch = 100_000
    static let base: Int64 = 10_000_000_000

    static func blocking(_ start: Int, _ count: Int) -> DBusValue {
        .array(element: "x", (start..<(start + count)).map { .int64(base + 2 * Int64($0)) })
    }

    static func identification(_ start: Int, _ count: Int) -> [DBusValue] {
        [.array(element: "x", (start..<(start + count)).map { .int64(base + 2 * Int64($0) + 1) }),
         .array(element: "s", (start..<(start + count)).map { .string("C\($0)") })]
    }

    /// Sends every batch of `load` to `target(kind)`: the same messages for the load and the baseline.
    static func sendAll(_ connection: Connection, _ load: DirectoryLoad, _ target: (_ identification: Bool) -> (ObjectPath, String, String)) async throws -> Double {
        let start = ContinuousClock.now
        for part in load.parts { try await send(connection, part, target) }
        return (ContinuousClock.now - start).seconds
    }

    private static func send(_ connection: Connection, _ part: DirectoryLoad.Part, _ target: (_ identification: Bool) -> (ObjectPath, String, String)) async throws {
        for offset in stride(from: part.blocking.lowerBound, to: part.blocking.upperBound, by: batch) {
            let (path, interface, member) = target(false)
            try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member,
                                      [blocking(offset, min(batch, part.blocking.upperBound - offset))])
        }
        for offset in stride(from: part.identification.lowerBound, to: part.identification.upperBound, by: batch) {
            let (path, interface, member) = target(true)
            try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member,
                                      identification(offset, min(batch, part.identification.upperBound - offset)))
        }
    }

    /// Loads `load` into `provider`'s directory as an app must: each part in an update of its own,
    /// the first complete, the rest incremental. Every update but the last is completed; the last
    /// is returned open, for the caller to complete (and time).
    static func loadAllButLastComplete(_ connection: Connection, provider: ObjectPath, _ load: DirectoryLoad) async throws -> ObjectPath {
        var open: ObjectPath?
        for part in load.parts {
            if let open { try await connection.telephony(Telephony1.CallDirectoryUpdate.complete, at: open) }
            let update = try await connection.telephony(Telephony1.Provider.beginCallDirectoryUpdate, part.incremental, at: provider)
            try await send(connection, part) { identification in
                (update, Telephony1.CallDirectoryUpdate.interface,
                 identification ? Telephony1.CallDirectoryUpdate.addIdentificationEntries.name : Telephony1.CallDirectoryUpdate.addBlockingEntries.name)
            }
            open = update
        }
        guard let open else { throw BenchError("a directory load with no update") }
        return open
    }

    static func measure(_ service: DaemonUnderTest, executable: String, perKind: Int, iterations: Int) async throws -> DirectoryResult {
        let connection = try Connection(address: service.address)
        defer { connection.close() }
        let provider = try await connection.registerProvider("Directory")

        let plan = DirectoryLoad(perKind: perKind)
        let noop = try await sendAll(connection, plan) { _ in (Telephony1.rootPath, "org.freedesktop.DBus.Peer", "Ping") }
        let before = try service.residentBytes()
        let start = ContinuousClock.now
        let last = try await loadAllButLastComplete(connection, provider: provider, plan)
        try await connection.telephony(Telephony1.CallDirectoryUpdate.complete, at: last)
        let load = (ContinuousClock.now - start).seconds
        // A new app's directory is off until the user turns it on.
        try await connection.telephony(Telephony1.CallDirectory.setDirectoryEnabled, "Directory", true)
        let growth = try service.residentBytes() - before

        let probe = "+\(base + 2 * Int64(perKind / 2) + 1)"
        let expected = "C\(perKind / 2)"
        let identify: @Sendable () async throws -> [DBusValue] = {
            [.string(try await connection.telephony(Telephony1.CallDirectory.identify, probe).0)]
        }
        guard try await identify().first == .string(expected) else { throw BenchError("Identify(\(probe)) did not answer \(expected)") }
        let ping: @Sendable () async throws -> [DBusValue] = { try await connection.ping(Telephony1.busName) }
        let (identifies, pings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, identify, ping)

        let ready = try await startToIdentify(service, executable: executable, probe: probe, expected: expected)
        return DirectoryResult(entries: 2 * perKind, updates: plan.parts.count, loadSeconds: load, noopSeconds: noop, residentGrowth: growth,
                               identify: Samples(identifies), ping: Samples(pings), startToIdentify: ready)
    }

    /// A second daemon, on a bus of its own but with the same data: from its start to the first right answer.
    static func startToIdentify(_ service: DaemonUnderTest, executable: String, probe: String, expected: String) async throws -> Double {
        let bus = try PrivateBus()
        defer { bus.stop() }
        var environment = bus.environment
        environment["XDG_DATA_HOME"] = service.dataHome.path
        let client = try Connection(address: bus.address)
        defer { client.close() }
        let start = ContinuousClock.now
        let daemon = try ChildProcess(executable, ["--address", bus.address, "--log-level", "error", "--no-notifications"], environment: environment)
        defer { daemon.kill() }
        // Polling is the measurement here: each try is one round trip, failing fast until the name is taken.
        while ContinuousClock.now - start < .seconds(20) {
            if let answer = try? await client.telephony(Telephony1.CallDirectory.identify, probe), answer.0 == expected {
                return (ContinuousClock.now - start).seconds
            }
            await Task.yield()
        }
        throw BenchError("a fresh monkeycalld did not answer Identify correctly within 20 s\(daemon.output)")
    }
}

/// How an app loads `perKind` blocking and `perKind` identification entries within the bounds of
/// one update (`DirectoryLimits.maximumUpdateBytes` in all, `maximumUpdateLabelBytes` of labels):
/// a complete update with as many entries as fit, then incremental updates with the rest, each as
/// full, blocking entries first. Numbers only grow, so each part adds after the last.
struct DirectoryLoad {
    struct Part {
        var incremental: Bool
        var blocking: Range<Int>
        var identification: Range<Int>
    }

    let parts: [Part]

    init(perKind: Int, bytes budget: Int = DirectoryLimits.maximumUpdateBytes, labelBytes labelBudget: Int = DirectoryLimits.maximumUpdateLabelBytes) {
        var parts: [Part] = []
        var part = Part(incremental: false, blocking: 0..<0, identification: 0..<0)
        var bytes = 0, labels = 0
        // Batch by batch: a batch that would overflow the update starts the next one.
        func add(_ range: Range<Int>, identification: Bool) {
            let labelCost = identification ? Self.labelBytes(range) : 0
            let cost = range.count * (identification ? 10 : 8) + labelCost
            if bytes + cost > budget || labels + labelCost > labelBudget {
                parts.append(part)
                part = Part(incremental: true, blocking: 0..<0, identification: 0..<0)
                bytes = 0
                labels = 0
            }
            if identification {
                part.identification = (part.identification.isEmpty ? range.lowerBound : part.identification.lowerBound)..<range.upperBound
            } else {
                part.blocking = (part.blocking.isEmpty ? range.lowerBound : part.blocking.lowerBound)..<range.upperBound
            }
            bytes += cost
            labels += labelCost
        }
        for offset in stride(from: 0, to: perKind, by: DirectoryPhase.batch) {
            add(offset..<min(offset + DirectoryPhase.batch, perKind), identification: false)
        }
        for offset in stride(from: 0, to: perKind, by: DirectoryPhase.batch) {
            add(offset..<min(offset + DirectoryPhase.batch, perKind), identification: true)
        }
        parts.append(part)
        self.parts = parts
    }

    /// The UTF-8 bytes of the labels "C0", "C1", … of `entries` (`DirectoryPhase.identification`).
    static func labelBytes(_ entries: Range<Int>) -> Int {
        var total = 0, digits = 1, power = 10
        var index = entries.lowerBound
        while index < entries.upperBound {
            while index >= power { digits += 1; power *= 10 }
            let end = min(entries.upperBound, power)
            total += (end - index) * (1 + digits)
            index = end
        }
        return total
    }
}
