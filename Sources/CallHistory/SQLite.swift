import CSQLite

/// What SQLite said when it refused: its result code (the primary one) and its message.
public struct SQLiteError: Error, CustomStringConvertible, Equatable {
    public let code: Int32
    public let message: String

    /// Another connection holds a lock: worth trying again.
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    public var description: String { "SQLite error \(code): \(message)" }
}

/// A value bound to a statement's `?`.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
}

/// One connection to an SQLite file, through Debian's libsqlite3, for the little CallHistory asks:
/// statements prepared once and kept, values bound by position, rows read by column index,
/// transactions. Not thread-safe, and not `Sendable`: `CallHistory` keeps it in a `Mutex`, which
/// hands it to one caller at a time (the closures run with it there are `@Sendable`, so that
/// nothing else of the caller's joins it).
///
/// Not GRDB, which the project used before: GRDB needs the whole of Foundation, and with it ICU's
/// 38 MB of data in the daemon (issue 44). The tests still open the same files through GRDB.
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var cache: [String: OpaquePointer] = [:]

    /// Opens (creating) the database at `path`; each statement waits up to `busyTimeout` seconds
    /// for another connection's lock.
    init(path: String, busyTimeout: Double) throws(SQLiteError) {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(opened)
            throw SQLiteError(code: code & 0xff, message: message)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 0)
        setBusyTimeout(busyTimeout)
    }

    deinit {
        for statement in cache.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    func setBusyTimeout(_ seconds: Double) {
        // Clamped: a conversion of a NaN or huge Double to Int32 would trap.
        let milliseconds = (seconds * 1000).rounded()
        sqlite3_busy_timeout(handle, milliseconds.isNaN ? 0 : Int32(min(max(milliseconds, 0), Double(Int32.max))))
    }

    /// The page cache and other memory SQLite can give back.
    func releaseMemory() {
        sqlite3_db_release_memory(handle)
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code & 0xff, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs `sql` (one or more statements, no values) and throws away any rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Runs the cached statement `sql` with `values` and calls `row` for each row until it
    /// returns false.
    func query(_ sql: String, _ values: [SQLiteValue] = [], row: (Row) throws -> Bool) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let code = switch value {
            case .integer(let number): sqlite3_bind_int64(statement, position, number)
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, monkeycall_sqlite_transient())
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            guard try row(Row(statement: statement)) else { return }
        }
    }

    /// Runs the cached statement `sql` with `values`, for what it changes.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws {
        try query(sql, values) { _ in true }
    }

    /// The first column of the first row, as an integer (0 when there is no row).
    func integer(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int64 {
        var result: Int64 = 0
        try query(sql, values) { row in
            result = row.integer(0)
            return false
        }
        return result
    }

    /// Rows the last statement inserted, updated or deleted.
    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `immediate` takes the write lock at the start, where the busy timeout applies (a deferred
    /// transaction that writes later can fail at once with SQLITE_BUSY to avoid a deadlock).
    func transaction<T>(immediate: Bool, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = cache[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        cache[sql] = statement
        return statement
    }

    /// The current row of a statement, read by column index.
    struct Row {
        let statement: OpaquePointer

        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func bool(_ column: Int32) -> Bool { integer(column) != 0 }
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, column) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
    }
}
