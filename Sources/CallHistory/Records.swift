import GRDB

/// A record whose id is the row id SQLite gives it: set on insert.
public protocol RowIDRecord: MutablePersistableRecord {
    var id: Int64? { get set }
}

extension RowIDRecord {
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// One call in Recents.
public struct RecentCall: Codable, Equatable, Sendable, FetchableRecord, RowIDRecord {
    public static let databaseTableName = "recent"

    public enum Status: String, Codable, Sendable, CaseIterable {
        case answered, missed, declined, blocked, filtered, failed, cancelled
    }

    public var id: Int64?
    public var callUUID: String
    public var providerName: String
    public var handle: String
    public var handleType: String
    public var callerName: String
    public var outgoing: Bool
    public var status: Status
    public var endReason: String
    public var startedAt: UInt64
    public var connectedAt: UInt64
    public var endedAt: UInt64
    public var hasVideo: Bool
    public var seen: Bool
    /// The sandboxed app behind the provider (Flatpak app id, `snap.NAME`); "" for a host app.
    public var appID: String

    public init(id: Int64? = nil, callUUID: String, providerName: String, handle: String, handleType: String, callerName: String,
                outgoing: Bool, status: Status, endReason: String, startedAt: UInt64, connectedAt: UInt64, endedAt: UInt64,
                hasVideo: Bool, seen: Bool = false, appID: String = "") {
        self.id = id
        self.callUUID = callUUID
        self.providerName = providerName
        self.handle = handle
        self.handleType = handleType
        self.callerName = callerName
        self.outgoing = outgoing
        self.status = status
        self.endReason = endReason
        self.startedAt = startedAt
        self.connectedAt = connectedAt
        self.endedAt = endedAt
        self.hasVideo = hasVideo
        self.seen = seen
        self.appID = appID
    }

    /// Rows are read by position, in this order: a page of Recents is read on
    /// every List, and Codable's decoding by name took longer than the query.
    public static var databaseSelection: [any SQLSelectable] { [
        Column("id"), Column("callUUID"), Column("providerName"), Column("handle"), Column("handleType"), Column("callerName"),
        Column("outgoing"), Column("status"), Column("endReason"), Column("startedAt"), Column("connectedAt"), Column("endedAt"),
        Column("hasVideo"), Column("seen"), Column("appID"),
    ] }

    public init(row: Row) throws {
        guard let status = Status(rawValue: row[7]) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "unknown Recents status '\(row[7] as String)'")
        }
        self.init(id: row[0], callUUID: row[1], providerName: row[2], handle: row[3], handleType: row[4], callerName: row[5],
                  outgoing: row[6], status: status, endReason: row[8], startedAt: row[9], connectedAt: row[10], endedAt: row[11],
                  hasVideo: row[12], seen: row[13], appID: row[14])
    }
}

/// A person the user calls often: names callers and lets them through Do Not Disturb.
public struct Favorite: Codable, Equatable, Sendable, FetchableRecord, RowIDRecord {
    public static let databaseTableName = "favorite"

    public var id: Int64?
    public var handle: String
    public var handleType: String
    public var name: String
    public var providerName: String

    public init(id: Int64? = nil, handle: String, handleType: String, name: String, providerName: String) {
        self.id = id
        self.handle = handle
        self.handleType = handleType
        self.name = name
        self.providerName = providerName
    }
}

/// Who a call in Recents was with, as its latest call knew them (`CallHistory.recentPeople`).
public struct RecentPerson: Equatable, Sendable {
    public var handle: String
    public var handleType: String
    public var callerName: String
    public var providerName: String
    /// The sandboxed app behind the provider; "" for a host app.
    public var appID: String

    public init(handle: String, handleType: String, callerName: String, providerName: String, appID: String) {
        (self.handle, self.handleType, self.callerName, self.providerName, self.appID) = (handle, handleType, callerName, providerName, appID)
    }

    public init(_ call: RecentCall) {
        self.init(handle: call.handle, handleType: call.handleType, callerName: call.callerName, providerName: call.providerName, appID: call.appID)
    }
}
