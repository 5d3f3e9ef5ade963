import FoundationEssentials
import Glibc
import Synchronization

/// Recents and Favorites in one SQLite database (WAL, versioned migrations).
/// Knows nothing of D-Bus. Safe to use from any thread: one connection, one use at a time.
/// Each call waits for the disk: a program that must not wait uses it through a `HistoryQueue`.
public final class CallHistory: Sendable {
    private let database: Mutex<SQLiteConnection>
    public let path: String
    /// Recents keeps at most this many entries: recording one more drops the oldest.
    public let recentsLimit: Int
    public static let defaultRecentsLimit = 10_000
    /// How many entries Recents holds as of this connection's last record, so that recording a
    /// call need not count them: `COUNT(*)` walks an index and looks each page up in the WAL,
    /// 0.5 ms at 100,000 rows, on every call. Trusted only while SQLite's `data_version` is what
    /// it was then (another connection's commit changes it, ours do not); our other writes to
    /// Recents forget it. Kept under the connection's lock.
    private let knownRows = Mutex<KnownRows?>(nil)
    private struct KnownRows {
        let rows: Int
        let dataVersion: Int64
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
        self.path = path
        // Whom the user called is theirs alone: a new folder is 0700, the files 0600.
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // Another process holding a lock: wait a little rather than fail at once.
        let connection = try SQLiteConnection(path: path, busyTimeout: max(busyTimeout, 2))
        try connection.execute("PRAGMA synchronous = NORMAL")
        // SQLite makes the WAL and shared-memory files with the database's mode: set it first.
        chmod(path, 0o600)
        try connection.execute("PRAGMA journal_mode = WAL")
        for file in [path + "-wal", path + "-shm"] { chmod(file, 0o600) }
        try Self.migrate(connection)
        try connection.transaction(immediate: true) { try Self.pruneRecents(connection, limit: recentsLimit) }
        if busyTimeout < 2 { connection.setBusyTimeout(busyTimeout) }
        database = Mutex(connection)
    }

    /// Gives back the memory SQLite holds for the connection (its page cache): for a service that
    /// has read what it needs at start and then waits, mostly idle, for the next call.
    public func releaseMemory() {
        database.withLock { $0.releaseMemory() }
    }

    /// A read: one statement, or several that need no snapshot of their own.
    private func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try database.withLock { connection in try body(connection) }
    }

    /// A write, in a transaction that takes the lock at its start. `body` is `@Sendable`: it is
    /// called inside the transaction's closure with the connection, which the lock keeps apart
    /// from everything else the caller holds.
    private func write<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try database.withLock { connection in try connection.transaction(immediate: true) { try body(connection) } }
    }

    /// Each schema change is a new migration, never an edit of an old one. Applied migrations are
    /// listed in `grdb_migrations`, the table GRDB's migrator kept when it made these files.
    static let migrations: [(identifier: String, sql: String)] = [
        ("v1: recents", """
            CREATE TABLE "recent" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "callUUID" TEXT NOT NULL, "providerName" TEXT NOT NULL,
                "handle" TEXT NOT NULL, "handleType" TEXT NOT NULL, "callerName" TEXT NOT NULL, "outgoing" BOOLEAN NOT NULL,
                "status" TEXT NOT NULL, "endReason" TEXT NOT NULL, "startedAt" INTEGER NOT NULL, "connectedAt" INTEGER NOT NULL,
                "endedAt" INTEGER NOT NULL, "hasVideo" BOOLEAN NOT NULL, "seen" BOOLEAN NOT NULL);
            CREATE INDEX "recent_unseen_missed" ON "recent"("status", "seen");
            """),
        ("v2: favorites", """
            CREATE TABLE "favorite" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "handle" TEXT NOT NULL, "handleType" TEXT NOT NULL,
                "name" TEXT NOT NULL, "providerName" TEXT NOT NULL);
            CREATE INDEX "favorite_handle" ON "favorite"("handle");
            """),
        // List reads newest first: without this index every page sorts the whole history.
        ("v3: recents by end time", #"CREATE INDEX "recent_by_end" ON "recent"("endedAt", "id");"#),
        // Silencing unknown callers asks whether a handle is in Recents: without it, a scan of the table.
        ("v4: recents by handle", #"CREATE INDEX "recent_by_handle" ON "recent"("handle");"#),
        // The sandboxed app behind the call's provider; "" for a host app and for every call recorded before.
        ("v5: recents by app", #"ALTER TABLE "recent" ADD COLUMN "appID" TEXT NOT NULL DEFAULT '';"#),
        // Recents are listed and pruned by row id (the order the service recorded them), not by
        // the end time an app reported: the end-time index has no reader left.
        ("v6: recents in the order recorded", #"DROP INDEX "recent_by_end";"#),
    ]

    /// Applies the migrations the file lacks, each in a transaction of its own, up to and
    /// including `last` (all when nil).
    static func migrate(_ connection: SQLiteConnection, upTo last: String? = nil) throws {
        try connection.execute(#"CREATE TABLE IF NOT EXISTS "grdb_migrations" ("identifier" TEXT NOT NULL PRIMARY KEY)"#)
        var applied = Set<String>()
        try connection.query(#"SELECT "identifier" FROM "grdb_migrations""#) { row in
            applied.insert(row.text(0))
            return true
        }
        for migration in migrations {
            if !applied.contains(migration.identifier) {
                try connection.transaction(immediate: true) {
                    try connection.execute(migration.sql)
                    try connection.run(#"INSERT INTO "grdb_migrations" ("identifier") VALUES (?)"#, [.text(migration.identifier)])
                }
            }
            if migration.identifier == last { return }
        }
    }

    /// Only the first migration: lets tests build a database of the previous schema.
    static func migrateToFirstVersion(_ path: String) throws {
        try migrate(SQLiteConnection(path: path, busyTimeout: 2), upTo: "v1: recents")
    }

    // MARK: Recents

    /// Records a call; returns it with its id.
    @discardableResult
    public func record(_ entry: RecentCall) throws -> RecentCall {
        try database.withLock { connection in try recordCountingRows(entry, connection) }
    }

    /// Records `entry` as `record` does and counts the unseen missed calls after it, in the same
    /// transaction. The service needs both for every call that ends: a read transaction of its
    /// own for the count cost as much as the write.
    public func recordCountingMissed(_ entry: RecentCall) throws -> (entry: RecentCall, missedCount: Int) {
        var missed = 0
        let recorded = try database.withLock { connection in
            try recordCountingRows(entry, connection) { missed = try Self.missedCount(connection) }
        }
        return (recorded, missed)
    }

    /// In a write of its own: inserts the entry (then runs `also`) and drops the oldest past the
    /// limit, counting the entries only when `knownRows` cannot say; the count is kept once the
    /// transaction commits (a rollback keeps the old one).
    private func recordCountingRows(_ entry: RecentCall, _ connection: SQLiteConnection, also: () throws -> Void = {}) throws -> RecentCall {
        let (inserted, rows, version) = try connection.transaction(immediate: true) {
            let inserted = try Self.insert(entry, connection)
            let version = try connection.integer("PRAGMA data_version")
            let known = knownRows.withLock { $0 }.flatMap { $0.dataVersion == version ? $0.rows : nil }
            let rows = try Self.pruneRecents(connection, limit: recentsLimit, rows: known.map { $0 + 1 })
            try also()
            return (inserted, rows, version)
        }
        knownRows.withLock { $0 = KnownRows(rows: rows, dataVersion: version) }
        return inserted
    }

    private static func insert(_ entry: RecentCall, _ connection: SQLiteConnection) throws -> RecentCall {
        try connection.run("""
            INSERT INTO recent (callUUID, providerName, handle, handleType, callerName, outgoing, status, endReason,
                                startedAt, connectedAt, endedAt, hasVideo, seen, appID) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, entry.insertedValues)
        var entry = entry
        entry.id = connection.lastInsertedRowID
        return entry
    }

    /// Records many calls in one transaction (an import, or a benchmark's history).
    public func recordAll(_ entries: [RecentCall]) throws {
        try changeRecents { connection in
            for entry in entries { _ = try Self.insert(entry, connection) }
            try Self.pruneRecents(connection, limit: recentsLimit)
        }
    }

    /// Drops the oldest entries (first by row id) past `limit`, in the write's transaction, and
    /// returns how many are left. `rows`: how many there are, when known; else they are counted.
    @discardableResult
    private static func pruneRecents(_ connection: SQLiteConnection, limit: Int, rows known: Int? = nil) throws -> Int {
        let rows = try known ?? Int(connection.integer("SELECT COUNT(*) FROM recent"))
        let excess = rows - limit
        guard excess > 0 else { return rows }
        try connection.run("DELETE FROM recent WHERE id IN (SELECT id FROM recent ORDER BY id LIMIT ?)", [.integer(Int64(excess))])
        return limit
    }

    /// A write to Recents other than a record: the entries are counted afresh after it.
    private func changeRecents<T: Sendable>(_ change: @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try write { connection in
            knownRows.withLock { $0 = nil }
            return try change(connection)
        }
    }

    private func fetchRecents(_ sql: String, _ values: [SQLiteValue], _ connection: SQLiteConnection) throws -> [RecentCall] {
        var entries: [RecentCall] = []
        try connection.query(sql, values) { row in
            entries.append(try RecentCall(row: row))
            return true
        }
        return entries
    }

    /// Newest first: in the order the service recorded them (the row id), never by a time an app
    /// reported, which could keep an entry "newest" for ever.
    public func recents(limit: Int, offset: Int = 0, missedOnly: Bool = false) throws -> [RecentCall] {
        try read { connection in
            let filter = missedOnly ? "WHERE status = 'missed' " : ""
            return try fetchRecents("SELECT \(RecentCall.columns) FROM recent \(filter)ORDER BY id DESC LIMIT ? OFFSET ?",
                                    [.integer(Int64(limit)), .integer(Int64(offset))], connection)
        }
    }

    public func recent(id: Int64) throws -> RecentCall? {
        try read { connection in try fetchRecents("SELECT \(RecentCall.columns) FROM recent WHERE id = ?", [.integer(id)], connection).first }
    }

    /// True when an entry was deleted.
    @discardableResult
    public func deleteRecent(id: Int64) throws -> Bool {
        try changeRecents { connection in
            try connection.run("DELETE FROM recent WHERE id = ?", [.integer(id)])
            return connection.changes > 0
        }
    }

    /// Deletes the entry and returns it; nil when there was none.
    public func removeRecent(id: Int64) throws -> RecentCall? {
        try changeRecents { connection in
            guard let entry = try fetchRecents("SELECT \(RecentCall.columns) FROM recent WHERE id = ?", [.integer(id)], connection).first else { return nil }
            try connection.run("DELETE FROM recent WHERE id = ?", [.integer(id)])
            return entry
        }
    }

    public func clearRecents() throws {
        try changeRecents { connection in try connection.run("DELETE FROM recent") }
    }

    public func markAllSeen() throws {
        try write { connection in try connection.run("UPDATE recent SET seen = 1 WHERE seen = 0") }
    }

    /// Every call recorded.
    public func recentsCount() throws -> Int {
        try read { connection in try Int(connection.integer("SELECT COUNT(*) FROM recent")) }
    }

    /// Missed calls not yet seen.
    public func missedCount() throws -> Int {
        try read { connection in try Self.missedCount(connection) }
    }

    private static func missedCount(_ connection: SQLiteConnection) throws -> Int {
        try Int(connection.integer("SELECT COUNT(*) FROM recent WHERE status = ? AND seen = 0", [.text(RecentCall.Status.missed.rawValue)]))
    }

    /// Whether this handle has called or been called before (for silencing unknown callers).
    public func knows(handle: String) throws -> Bool {
        try read { connection in try connection.integer("SELECT EXISTS (SELECT 1 FROM recent WHERE handle = ?)", [.text(handle)]) != 0 }
    }

    /// Who the latest calls were with, newest first, each handle once: at most `limit` of them,
    /// from at most `rows` entries (read newest first by row id, stopping early), with what each
    /// handle's latest call knew of it: its type, the name shown, and the app that placed or took it.
    public func recentPeople(limit: Int, rows: Int) throws -> [RecentPerson] {
        try read { connection in
            var seen = Set<String>()
            var people: [RecentPerson] = []
            guard limit > 0 else { return people }
            try connection.query("SELECT handle, handleType, callerName, providerName, appID FROM recent ORDER BY id DESC LIMIT ?",
                                 [.integer(Int64(rows))]) { row in
                let handle = row.text(0)
                if seen.insert(handle).inserted {
                    people.append(RecentPerson(handle: handle, handleType: row.text(1), callerName: row.text(2), providerName: row.text(3), appID: row.text(4)))
                }
                return people.count < limit
            }
            return people
        }
    }

    // MARK: Favorites

    @discardableResult
    public func addFavorite(_ favorite: Favorite) throws -> Favorite {
        try write { connection in
            try connection.run("INSERT INTO favorite (handle, handleType, name, providerName) VALUES (?, ?, ?, ?)",
                               [.text(favorite.handle), .text(favorite.handleType), .text(favorite.name), .text(favorite.providerName)])
            var favorite = favorite
            favorite.id = connection.lastInsertedRowID
            return favorite
        }
    }

    @discardableResult
    public func removeFavorite(id: Int64) throws -> Bool {
        try write { connection in
            try connection.run("DELETE FROM favorite WHERE id = ?", [.integer(id)])
            return connection.changes > 0
        }
    }

    private func fetchFavorites(_ sql: String, _ values: [SQLiteValue] = []) throws -> [Favorite] {
        try read { connection in
            var favorites: [Favorite] = []
            try connection.query(sql, values) { row in
                favorites.append(Favorite(row: row))
                return true
            }
            return favorites
        }
    }

    public func favorites() throws -> [Favorite] {
        try fetchFavorites("SELECT \(Favorite.columns) FROM favorite ORDER BY name, id")
    }

    public func favorite(id: Int64) throws -> Favorite? {
        try fetchFavorites("SELECT \(Favorite.columns) FROM favorite WHERE id = ?", [.integer(id)]).first
    }

    /// The name of the favorite with this handle, if any.
    public func favoriteName(for handle: String) throws -> String? {
        try fetchFavorites("SELECT \(Favorite.columns) FROM favorite WHERE handle = ? ORDER BY id LIMIT 1", [.text(handle)]).first?.name
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try read { connection in
            var result = ""
            try connection.query("PRAGMA integrity_check") { row in
                result = row.text(0)
                return false
            }
            return result
        }
    }
}
