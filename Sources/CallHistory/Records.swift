@_exported import TelephonyVocabulary

/// One call in Recents.
public struct RecentCall: Codable, Equatable, Sendable {
    public typealias Status = RecentStatus

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

    /// The columns read, in the order `init(row:)` reads them by position: a page of Recents is
    /// read on every List, and decoding by name took longer than the query.
    static let columns = "id, callUUID, providerName, handle, handleType, callerName, outgoing, status, endReason, startedAt, connectedAt, endedAt, hasVideo, seen, appID"

    init(row: SQLiteConnection.Row) throws(SQLiteError) {
        let statusText = row.text(7)
        guard let status = Status(rawValue: statusText) else {
            throw SQLiteError(code: 11 /* SQLITE_CORRUPT */, message: "unknown Recents status '\(statusText)'")
        }
        self.init(id: row.integer(0), callUUID: row.text(1), providerName: row.text(2), handle: row.text(3), handleType: row.text(4),
                  callerName: row.text(5), outgoing: row.bool(6), status: status, endReason: row.text(8),
                  startedAt: UInt64(clamping: row.integer(9)), connectedAt: UInt64(clamping: row.integer(10)),
                  endedAt: UInt64(clamping: row.integer(11)), hasVideo: row.bool(12), seen: row.bool(13), appID: row.text(14))
    }

    /// The values of `INSERT INTO recent (callUUID, …, appID)`, in that order.
    var insertedValues: [SQLiteValue] {
        [.text(callUUID), .text(providerName), .text(handle), .text(handleType), .text(callerName), .integer(outgoing ? 1 : 0),
         .text(status.rawValue), .text(endReason), .integer(Int64(clamping: startedAt)), .integer(Int64(clamping: connectedAt)),
         .integer(Int64(clamping: endedAt)), .integer(hasVideo ? 1 : 0), .integer(seen ? 1 : 0), .text(appID)]
    }
}

/// A person the user calls often: names callers and lets them through Do Not Disturb.
public struct Favorite: Codable, Equatable, Sendable {
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

    static let columns = "id, handle, handleType, name, providerName"

    init(row: SQLiteConnection.Row) {
        self.init(id: row.integer(0), handle: row.text(1), handleType: row.text(2), name: row.text(3), providerName: row.text(4))
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
