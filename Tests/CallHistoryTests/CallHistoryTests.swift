import DBusTestSupport
import Foundation
import GRDB
import Testing
@testable import CallHistory

@Suite("Recents and Favorites in SQLite")
struct CallHistoryTests {
    /// A fresh database's path, in a folder of its own under this test process's one folder, which goes when the process exits.
    static func temporaryPath() -> String { scratch + "/\(UUID().uuidString.prefix(8))/monkeycall.sqlite" }

    private static let scratch: String = {
        let folder = NSTemporaryDirectory() + "monkeycall-history-\(getpid())"
        RemovedAtExit.add(folder)
        return folder
    }()

    static func entry(_ handle: String, _ status: RecentCall.Status, endedAt: UInt64) -> RecentCall {
        RecentCall(callUUID: UUID().uuidString.lowercased(), providerName: "Monkey", handle: handle, handleType: "generic", callerName: "",
                   outgoing: false, status: status, endReason: status == .missed ? "unanswered" : "", startedAt: endedAt - 10,
                   connectedAt: 0, endedAt: endedAt, hasVideo: false)
    }

    @Test func recordsNewestFirstWithPagingAndMissedCount() throws {
        let history = try CallHistory(path: Self.temporaryPath())
        for index in 1...10 {
            try history.record(Self.entry("caller\(index)", index % 3 == 0 ? .missed : .answered, endedAt: UInt64(1000 + index)))
        }
        #expect(try history.recents(limit: 3).map(\.handle) == ["caller10", "caller9", "caller8"])
        #expect(try history.recents(limit: 3, offset: 3).map(\.handle) == ["caller7", "caller6", "caller5"])
        #expect(try history.recents(limit: 10, missedOnly: true).map(\.handle) == ["caller9", "caller6", "caller3"])
        #expect(try history.missedCount() == 3)
        try history.markAllSeen()
        #expect(try history.missedCount() == 0)
        let first = try #require(try history.recents(limit: 1).first)
        #expect(try history.deleteRecent(id: first.id!))
        #expect(try history.deleteRecent(id: first.id!) == false)
        try history.clearRecents()
        #expect(try history.recents(limit: 10).isEmpty)
        #expect(try history.integrityCheck() == "ok")
    }

    @Test("Recents keeps at most its limit (default 10,000), the oldest go, a lower limit prunes at open; handles are indexed; List stays fast at the limit (found on main: no bound, a scan per handle)")
    func recentsLimit() throws {
        let path = Self.temporaryPath()
        let history = try CallHistory(path: path)
        #expect(history.recentsLimit == 10_000)
        try history.recordAll((1...10_000).map { Self.entry("caller\($0)", .answered, endedAt: UInt64(1_000_000 + $0)) })
        #expect(try history.recentsCount() == 10_000)
        var slowestRecord = Duration.zero
        for index in 10_001...10_005 {
            let started = ContinuousClock.now
            try history.record(Self.entry("caller\(index)", .missed, endedAt: UInt64(1_000_000 + index)))
            slowestRecord = max(slowestRecord, ContinuousClock.now - started)
        }
        #expect(try history.recentsCount() == 10_000)
        #expect(try history.recents(limit: 1).first?.handle == "caller10005")
        #expect(try history.recents(limit: 1, offset: 9_999).first?.handle == "caller6")
        #expect(try !history.knows(handle: "caller5"))
        #expect(try history.knows(handle: "caller6"))
        #expect(try history.missedCount() == 5)

        var page = Duration.zero, whole = Duration.zero
        for _ in 0..<5 {
            var started = ContinuousClock.now
            #expect(try history.recents(limit: 100, offset: 9_900).count == 100)
            page = max(page, ContinuousClock.now - started)
            started = ContinuousClock.now
            #expect(try history.recents(limit: 10_000).count == 10_000)
            whole = max(whole, ContinuousClock.now - started)
        }
        print("recents at the limit of 10,000: record \(slowestRecord), last page of 100 \(page), all 10,000 \(whole)")
        #expect(page < .milliseconds(200))

        // Asking whether a handle is known reads the index, not the table.
        let plan = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT COUNT(*) FROM recent WHERE handle = ?", arguments: ["caller6"]).map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.contains { $0.contains("recent_by_handle") }, "\(plan)")

        let lower = try CallHistory(path: path, recentsLimit: 3)
        #expect(try lower.recents(limit: 10).map(\.handle) == ["caller10005", "caller10004", "caller10003"])
        // Newest is the last recorded, whatever end time an app reported: the oldest recorded goes.
        try lower.record(Self.entry("reported as older", .answered, endedAt: 100))
        #expect(try lower.recents(limit: 10).map(\.handle) == ["reported as older", "caller10005", "caller10004"])
        try lower.record(Self.entry("reported as the year 148,000", .answered, endedAt: 1 << 62))
        try lower.record(Self.entry("the user's next call", .answered, endedAt: 200))
        #expect(try lower.recents(limit: 10).map(\.handle) == ["the user's next call", "reported as the year 148,000", "reported as older"])
    }

    @Test("recording at the limit counts Recents only after a change it did not make: another program's deletes, our own clear; nothing more goes than the limit asks")
    func countKeptBetweenRecords() throws {
        let path = Self.temporaryPath()
        let history = try CallHistory(path: path, recentsLimit: 3)
        for index in 1...4 { try history.record(Self.entry("caller\(index)", .answered, endedAt: UInt64(1000 + index))) }
        #expect(try history.recents(limit: 10).map(\.handle) == ["caller4", "caller3", "caller2"])

        // Another program deletes one: a count kept from our last record would say 3 + 1 and drop caller2.
        let other = try DatabaseQueue(path: path)
        try other.write { db in try db.execute(sql: "DELETE FROM recent WHERE handle = 'caller3'") }
        try history.record(Self.entry("caller5", .answered, endedAt: 1005))
        #expect(try history.recents(limit: 10).map(\.handle) == ["caller5", "caller4", "caller2"])

        // Our own delete and clear: counted afresh too.
        let newest = try #require(try history.recents(limit: 1).first)
        #expect(try history.deleteRecent(id: newest.id!))
        try history.record(Self.entry("caller6", .answered, endedAt: 1006))
        #expect(try history.recents(limit: 10).map(\.handle) == ["caller6", "caller4", "caller2"])
        try history.clearRecents()
        try history.record(Self.entry("caller7", .answered, endedAt: 1007))
        #expect(try history.recents(limit: 10).map(\.handle) == ["caller7"])
        for index in 8...10 { try history.record(Self.entry("caller\(index)", .answered, endedAt: UInt64(1000 + index))) }
        #expect(try history.recents(limit: 10).map(\.handle) == ["caller10", "caller9", "caller8"])
    }

    @Test func favoritesNameCallers() throws {
        let history = try CallHistory(path: Self.temporaryPath())
        let alice = try history.addFavorite(Favorite(handle: "+15551234", handleType: "phone-number", name: "Alice", providerName: "Monkey"))
        #expect(try history.favoriteName(for: "+15551234") == "Alice")
        #expect(try history.favorites().map(\.name) == ["Alice"])
        #expect(try history.removeFavorite(id: alice.id!))
        #expect(try history.favoriteName(for: "+15551234") == nil)
    }

    @Test("a database of the previous schema migrates and keeps its rows")
    func migratesFromThePreviousSchema() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try CallHistory.migrateToFirstVersion(path)
        do {
            let old = try DatabaseQueue(path: path)
            // A row as the first version wrote it: none of the later columns.
            try old.write { db in
                try db.execute(sql: """
                    INSERT INTO recent (callUUID, providerName, handle, handleType, callerName, outgoing, status, endReason,
                                        startedAt, connectedAt, endedAt, hasVideo, seen)
                    VALUES ('u', 'Monkey', 'old', 'generic', '', 0, 'missed', '', 400, 0, 500, 0, 0)
                    """)
            }
            #expect(try old.read { db in try db.tableExists("favorite") } == false)
        }
        let history = try CallHistory(path: path)
        #expect(try history.recents(limit: 5).map(\.handle) == ["old"])
        #expect(try history.recents(limit: 5).map(\.appID) == [""])
        try history.addFavorite(Favorite(handle: "x", handleType: "generic", name: "X", providerName: "Monkey"))
        // And again: opening a current database changes nothing.
        #expect(try CallHistory(path: path).favorites().count == 1)
    }

    @Test("a file that is not a database is an error, not a crash")
    func corruptFile() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect(throws: (any Error).self) { try CallHistory(path: path) }
    }
}
