import CallHistory
import DBus
import Foundation
import MonkeyCallAPI

struct RecentsResult {
    let rows: Int
    /// `List(50)` and Ping, in alternating rounds.
    let list: Samples
    let ping: Samples
    /// `List(50)` again, in alternating rounds with the same page from a server that only replies
    /// with it (`floor`): the one against the other, as every floor of the bench is measured.
    let pagedList: Samples
    let floor: Samples
    let recorded: Int
    let recordSeconds: Double
    var ratio: Double { list.median / ping.median }
    var floorRatio: Double { pagedList.median / floor.median }
    var perSecond: Double { Double(recorded) / recordSeconds }
}

/// Recents at scale: `List(50)` over a history of `rows` calls against Ping,
/// and how fast ending calls become Recents entries (EntryAdded).
enum RecentsPhase {
    /// Writes `rows` past calls where the daemon will find its database.
    static func prefill(dataHome: URL, rows: Int) throws {
        let history = try CallHistory(path: dataHome.appendingPathComponent("monkeycall/monkeycall.sqlite").path, recentsLimit: rows)
        let now = UInt64(Date().timeIntervalSince1970 * 1e6)
        let statuses: [RecentCall.Status] = [.answered, .missed, .declined, .cancelled]
        try history.recordAll((0..<rows).map { index in
            let ended = now - UInt64(rows - index) * 60_000_000
            return RecentCall(callUUID: UUID().uuidString.lowercased(), providerName: "History", handle: "+1555\(1_000_000 + index)",
                              handleType: HandleType.phoneNumber.rawValue, callerName: "", outgoing: index % 3 == 0, status: statuses[index % 4],
                              endReason: "", startedAt: ended - 30_000_000, connectedAt: 0, endedAt: ended, hasVideo: false, seen: true)
        })
    }

    static func measure(address: String, rows: Int, iterations: Int, recordings: Int) async throws -> RecentsResult {
        let connection = try Connection(address: address)
        defer { connection.close() }
        let list: @Sendable () async throws -> [DBusValue] = {
            [try await connection.telephony(Telephony1.Recents.list, 50, 0).dbusValue]
        }
        let ping: @Sendable () async throws -> [DBusValue] = { try await connection.ping(Telephony1.busName) }
        guard case .array(_, let first)? = try await list().first, first.count == 50 else {
            throw BenchError("Recents.List(50) did not return 50 entries from the prefilled history")
        }
        let (lists, pings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, list, ping)
        let (pagedLists, floors) = try await againstFloor(address: address, page: .array(element: "a{sv}", first), iterations: iterations, list)

        // Ending calls as fast as one provider can: each becomes an entry.
        let app = try Connection(address: address)
        defer { app.close() }
        let path = try await app.registerProvider("Recorder")
        let (added, entry) = AsyncStream<Void>.makeStream()
        let subscription = try await connection.subscribe(Telephony1.Recents.entryAdded.matchRule) { _ in entry.yield() }
        defer { subscription.cancel() }
        try await connection.subscribeToTelephony()  // Recents entries go to subscribers only
        let start = ContinuousClock.now
        for index in 0..<recordings {
            let uuid = UUID().uuidString.lowercased()
            _ = try await app.telephony(Telephony1.Provider.reportNewIncomingCall, try UUID.bench(uuid), CallUpdate(handle: Handle(value: "r\(index)")), at: path)
            try await app.telephony(Telephony1.Provider.reportCallEnded, try UUID.bench(uuid), EndReason.remoteEnded.rawValue, 0, at: path)
        }
        var seen = 0
        for await _ in added {
            seen += 1
            if seen == recordings { break }
        }
        let seconds = (ContinuousClock.now - start).seconds
        return RecentsResult(rows: rows, list: Samples(lists), ping: Samples(pings), pagedList: Samples(pagedLists), floor: Samples(floors),
                             recorded: recordings, recordSeconds: seconds)
    }

    /// `list` against what any service on libdbus and dbus-daemon pays for such a reply: the
    /// same page returned by a server in this process that does nothing else, in alternating
    /// rounds (timed in rounds of their own, one after the other, the machine's drift between
    /// them showed as 1.18 in one full run and 1.39 in the next).
    /// The 50 × 14 variants are validated three times on the way (by libdbus
    /// in the server, in dbus-daemon and in the client), which costs more than
    /// the query and the encoding together.
    private static func againstFloor(address: String, page: DBusValue, iterations: Int,
                                     _ list: @escaping @Sendable () async throws -> [DBusValue]) async throws -> ([Double], [Double]) {
        let server = try Connection(address: address)
        let objects = ObjectServer(connection: server)
        defer { withExtendedLifetime(objects) { server.close() } }
        let interface = "org.monkeycall.Bench.Page"
        try objects.export("/org/monkeycall/Bench", [Interface(interface) { Method("Get", out: ["entries": "aa{sv}"]) { _ in .values([page]) } }])
        let client = try Connection(address: address)
        defer { client.close() }
        let get: @Sendable () async throws -> [DBusValue] = {
            try await client.call(destination: server.uniqueName, path: "/org/monkeycall/Bench", interface: interface, member: "Get")
        }
        return try await RoundTrips.interleaved(iterations: iterations, rounds: 10, list, get)
    }
}
