import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI

struct DirectoryResult {
    let entries: Int
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

    /// Sends every batch to `target(kind)`: the same messages for the load and the baseline.
    static func sendAll(_ connection: Connection, perKind: Int, _ target: (_ identification: Bool) -> (ObjectPath, String, String)) async throws -> Double {
        let start = ContinuousClock.now
        for offset in stride(from: 0, to: perKind, by: batch) {
            let (path, interface, member) = target(false)
            try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member,
                                      [blocking(offset, min(batch, perKind - offset))])
        }
        for offset in stride(from: 0, to: perKind, by: batch) {
            let (path, interface, member) = target(true)
            try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member,
                                      identification(offset, min(batch, perKind - offset)))
        }
        return (ContinuousClock.now - start).seconds
    }

    static func measure(_ service: DaemonUnderTest, executable: String, perKind: Int, iterations: Int) async throws -> DirectoryResult {
        let connection = try Connection(address: service.address)
        defer { connection.close() }
        let provider = try await connection.registerProvider("Directory")

        let noop = try await sendAll(connection, perKind: perKind) { _ in (Telephony1.rootPath, "org.freedesktop.DBus.Peer", "Ping") }
        let before = try service.residentBytes()
        let update = try await connection.telephony(Telephony1.Provider.beginCallDirectoryUpdate, false, at: provider)
        let start = ContinuousClock.now
        _ = try await sendAll(connection, perKind: perKind) { identification in
            (update, Telephony1.CallDirectoryUpdate.interface,
             identification ? Telephony1.CallDirectoryUpdate.addIdentificationEntries.name : Telephony1.CallDirectoryUpdate.addBlockingEntries.name)
        }
        try await connection.telephony(Telephony1.CallDirectoryUpdate.complete, at: update)
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
        return DirectoryResult(entries: 2 * perKind, loadSeconds: load, noopSeconds: noop, residentGrowth: growth,
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
