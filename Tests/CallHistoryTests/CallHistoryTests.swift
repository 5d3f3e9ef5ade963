import Foundation
import GRDB
import Testing
@testable import CallHistory

@Suite("Recents and Favorites in SQLite")
struct CallHistoryTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-history-\(UUID().uuidString.prefix(8))/monkeycall.sqlite").path
    }

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
