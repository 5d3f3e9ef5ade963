import Foundation
import GRDB
import Synchronization

/// Recents and Favorites in one SQLite database (WAL, versioned migrations).
/// Knows nothing of D-Bus. Safe to use from any thread; GRDB serialises writes.
/// Each call waits for the disk: a program that must not wait uses it through a `HistoryQueue`.
public final class CallHistory: Sendable {
    private let database: DatabaseQueue
    public let path: String
    /// Recents keeps at most this many entries: recording one more drops the oldest.
    public let recentsLimit: Int
    public static let defaultRecentsLimit = 10_000
    /// How many entries Recents holds as of this connection's last record, so that recording a
    /// call need not count them: `COUNT(*)` walks an index and looks each page up in the WAL,
    /// 0.5 ms at 100,000 rows, on every call. Trusted only while SQLite's `data_version` is what
    /// it was then (another connection's commit changes it, ours do not); our other writes to
    /// Recents forget it.
    private let knownRows = Mutex<KnownRows?>(nil)
    private struct KnownRows {
        let rows: Int
        let dataVersion: Int
    }

    /// Opens (creating and migrating as needed) the database at `path`.
    /// `busyTimeout`: how long each use waits for another process's lock before it fails
    /// with `SQLITE_BUSY` (opening and migrating wait 2 s at least). A `HistoryQueue`
    /// tries again itself, and wants it short, so that its queue stays free for reads.
    /// `recentsLimit`: entries kept (at least 1); a database holding more (a lower limit than
    /// before) loses its oldest here.
    public init(path: String, busyTimeout: Double = 2, recentsLimit: Int = CallHistory.defaultRecentsLimit) throws {
        precondition(recentsLimit > 0, "Recents keeps at least one entry")
        self.recentsLimit = recentsLimit
        // Whom the user called is theirs alone: a new folder is 0700, the files 0600.
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var configuration = Configuration()
        // Another process holding a lock: wait a little rather than fail at once.
        configuration.busyMode = .timeout(2)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        // SQLite makes the WAL and shared-memory files with the database's mode: set it first.
        chmod(path, 0o600)
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        for file in [path + "-wal", path + "-shm"] { chmod(file, 0o600) }
        self.path = path
        try Self.migrator.migrate(database)
        try database.write { db in try self.pruneRecents(db) }
        if busyTimeout < 2 {
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA busy_timeout = \(Int((busyTimeout * 1000).rounded()))") }
        }
    }

    /// Gives back the memory SQLite holds for the connection (its page cache): for a service that
    /// has read what it needs at start and then waits, mostly idle, for the next call.
    public func releaseMemory() {
        database.releaseMemory()
    }

    /// Each schema change is a new migration, never an edit of an old one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: recents") { db in
            try db.create(table: "recent") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("callUUID", .text).notNull()
                t.column("providerName", .text).notNull()
                t.column("handle", .text).notNull()
                t.column("handleType", .text).notNull()
                t.column("callerName", .text).notNull()
                t.column("outgoing", .boolean).notNull()
                t.column("status", .text).notNull()
                t.column("endReason", .text).notNull()
                t.column("startedAt", .integer).notNull()
                t.column("connectedAt", .integer).notNull()
                t.column("endedAt", .integer).notNull()
                t.column("hasVideo", .boolean).notNull()
                t.column("seen", .boolean).notNull()
            }
            try db.create(index: "recent_unseen_missed", on: "recent", columns: ["status", "seen"])
        }
        migrator.registerMigration("v2: favorites") { db in
            try db.create(table: "favorite") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("handle", .text).notNull()
                t.column("handleType", .text).notNull()
                t.column("name", .text).notNull()
                t.column("providerName", .text).notNull()
            }
            try db.create(index: "favorite_handle", on: "favorite", columns: ["handle"])
        }
        migrator.registerMigration("v3: recents by end time") { db in
            // List reads newest first: without this index every page sorts the whole history.
            try db.create(index: "recent_by_end", on: "recent", columns: ["endedAt", "id"])
        }
        migrator.registerMigration("v4: recents by handle") { db in
            // Silencing unknown callers asks whether a handle is in Recents: without it, a scan of the table.
            try db.create(index: "recent_by_handle", on: "recent", columns: ["handle"])
        }
        migrator.registerMigration("v5: recents by app") { db in
            // The sandboxed app behind the call's provider; "" for a host app and for every call recorded before.
            try db.alter(table: "recent") { t in t.add(column: "appID", .text).notNull().defaults(to: "") }
        }
        migrator.registerMigration("v6: recents in the order recorded") { db in
            // Recents are listed and pruned by row id (the order the service recorded them), not by
            // the end time an app reported: the end-time index has no reader left.
            try db.drop(index: "recent_by_end")
        }
        return migrator
    }

    /// Only the first migration: lets tests build a database of the previous schema.
    static func migrateToFirstVersion(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue, upTo: "v1: recents")
    }

    // MARK: Recents

    /// Records a call; returns it with its id.
    @discardableResult
    public func record(_ entry: RecentCall) throws -> RecentCall {
        try database.write { db in try insertRecent(entry, db) }
    }

    /// Records `entry` as `record` does and counts the unseen missed calls after it, in the same
    /// transaction. The service needs both for every call that ends: a read transaction of its
    /// own for the count cost as much as the write.
    public func recordCountingMissed(_ entry: RecentCall) throws -> (entry: RecentCall, missedCount: Int) {
        try database.write { db in (try insertRecent(entry, db), try Self.missedCount(db)) }
    }

    /// In a write: inserts the entry and drops the oldest past the limit, counting the entries
    /// only when `knownRows` cannot say.
    private func insertRecent(_ entry: RecentCall, _ db: Database) throws -> RecentCall {
        var entry = entry
        try entry.insert(db)
        let version = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))!
        let known = knownRows.withLock { $0 }.flatMap { $0.dataVersion == version ? $0.rows : nil }
        let rows = try pruneRecents(db, rows: known.map { $0 + 1 })
        // GRDB runs one write at a time, and this before the next one; a rollback keeps the old count.
        db.afterNextTransaction { [self] _ in knownRows.withLock { $0 = KnownRows(rows: rows, dataVersion: version) } }
        return entry
    }

    /// Records many calls in one transaction (an import, or a benchmark's history).
    public func recordAll(_ entries: [RecentCall]) throws {
        try changeRecents { db in
            for var entry in entries { try entry.insert(db) }
            try pruneRecents(db)
        }
    }

    /// Drops the oldest entries (last in `recents` order) past `recentsLimit`, in the write's
    /// transaction, and returns how many are left. `rows`: how many there are, when known;
    /// else they are counted. Cached statements: SQLite parses each once.
    @discardableResult
    private func pruneRecents(_ db: Database, rows known: Int? = nil) throws -> Int {
        let rows = try known ?? Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM recent"))!
        let excess = rows - recentsLimit
        guard excess > 0 else { return rows }
        try db.cachedStatement(sql: "DELETE FROM recent WHERE id IN (SELECT id FROM recent ORDER BY id LIMIT ?)").execute(arguments: [excess])
        return recentsLimit
    }

    /// A write to Recents other than a record: the entries are counted afresh after it.
    private func changeRecents<T>(_ change: (Database) throws -> T) throws -> T {
        try database.write { db in
            knownRows.withLock { $0 = nil }
            return try change(db)
        }
    }

    /// Newest first: in the order the service recorded them (the row id), never by a time an app
    /// reported, which could keep an entry "newest" for ever.
    public func recents(limit: Int, offset: Int = 0, missedOnly: Bool = false) throws -> [RecentCall] {
        try database.read { db in
            var request = RecentCall.order(Column("id").desc)
            if missedOnly { request = request.filter(Column("status") == RecentCall.Status.missed.rawValue) }
            return try request.limit(limit, offset: offset).fetchAll(db)
        }
    }

    public func recent(id: Int64) throws -> RecentCall? {
        try database.read { db in try RecentCall.fetchOne(db, key: id) }
    }

    /// True when an entry was deleted.
    @discardableResult
    public func deleteRecent(id: Int64) throws -> Bool {
        try changeRecents { db in try RecentCall.deleteOne(db, key: id) }
    }

    /// Deletes the entry and returns it; nil when there was none.
    public func removeRecent(id: Int64) throws -> RecentCall? {
        try changeRecents { db in
            guard let entry = try RecentCall.fetchOne(db, key: id) else { return nil }
            try entry.delete(db)
            return entry
        }
    }

    public func clearRecents() throws {
        _ = try changeRecents { db in try RecentCall.deleteAll(db) }
    }

    public func markAllSeen() throws {
        try database.write { db in try db.execute(sql: "UPDATE recent SET seen = 1 WHERE seen = 0") }
    }

    /// Every call recorded.
    public func recentsCount() throws -> Int {
        try database.read { db in try RecentCall.fetchCount(db) }
    }

    /// Missed calls not yet seen.
    public func missedCount() throws -> Int {
        try database.read { db in try Self.missedCount(db) }
    }

    private static func missedCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM recent WHERE status = ? AND seen = 0"), arguments: [RecentCall.Status.missed.rawValue])!
    }

    /// Whether this handle has called or been called before (for silencing unknown callers).
    public func knows(handle: String) throws -> Bool {
        try database.read { db in try RecentCall.filter(Column("handle") == handle).fetchCount(db) > 0 }
    }

    /// Distinct handles of the latest calls, newest first: at most `limit` of them, from at
    /// most `rows` entries (read newest first by row id, stopping early).
    public func recentHandles(limit: Int, rows: Int) throws -> [String] {
        try database.read { db in
            var seen = Set<String>()
            var handles: [String] = []
            let cursor = try String.fetchCursor(db, sql: "SELECT handle FROM recent ORDER BY id DESC LIMIT ?", arguments: [rows])
            while handles.count < limit, let handle = try cursor.next() {
                if seen.insert(handle).inserted { handles.append(handle) }
            }
            return handles
        }
    }

    /// As `recentHandles`, with what each handle's latest call knew of it: its type, the name
    /// shown, and the app that placed or took it.
    public func recentPeople(limit: Int, rows: Int) throws -> [RecentPerson] {
        try database.read { db in
            var seen = Set<String>()
            var people: [RecentPerson] = []
            let cursor = try Row.fetchCursor(db, sql: "SELECT handle, handleType, callerName, providerName, appID FROM recent ORDER BY id DESC LIMIT ?",
                                             arguments: [rows])
            while people.count < limit, let row = try cursor.next() {
                let handle: String = row[0]
                if seen.insert(handle).inserted {
                    people.append(RecentPerson(handle: handle, handleType: row[1], callerName: row[2], providerName: row[3], appID: row[4]))
                }
            }
            return people
        }
    }

    // MARK: Favorites

    @discardableResult
    public func addFavorite(_ favorite: Favorite) throws -> Favorite {
        try database.write { db in
            var favorite = favorite
            try favorite.insert(db)
            return favorite
        }
    }

    @discardableResult
    public func removeFavorite(id: Int64) throws -> Bool {
        try database.write { db in try Favorite.deleteOne(db, key: id) }
    }

    public func favorites() throws -> [Favorite] {
        try database.read { db in try Favorite.order(Column("name"), Column("id")).fetchAll(db) }
    }

    public func favorite(id: Int64) throws -> Favorite? {
        try database.read { db in try Favorite.fetchOne(db, key: id) }
    }

    /// The name of the favorite with this handle, if any.
    public func favoriteName(for handle: String) throws -> String? {
        try database.read { db in try Favorite.filter(Column("handle") == handle).order(Column("id")).fetchOne(db)?.name }
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try database.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }
}
