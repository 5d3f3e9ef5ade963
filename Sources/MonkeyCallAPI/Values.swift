import DBus

/// One action of a transaction (`(sa{sv})` in `RequestTransaction`): its kind
/// (`start`, `answer`, ...) and its arguments.
public struct ActionValue: DBusRepresentable, Sendable {
    public var kind: String
    public var args: [String: DBusValue]

    public init(kind: String, args: [String: DBusValue]) {
        self.kind = kind
        self.args = args
    }

    public static var dbusSignature: Signature { "(sa{sv})" }
    public var dbusValue: DBusValue { .structure([.string(kind), .vardict(args)]) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        let (kind, args) = try Self.members(of: dbusValue, "action", String.self, [String: DBusValue].self)
        self.init(kind: kind, args: args)
    }
}

/// One app's call directory in `ListDirectories` (`(sbtt)`).
public struct DirectorySummary: DBusRepresentable, Sendable, Equatable {
    public var app: String
    public var enabled: Bool
    public var blockingCount: UInt64
    public var identificationCount: UInt64

    public init(app: String, enabled: Bool, blockingCount: UInt64, identificationCount: UInt64) {
        self.app = app
        self.enabled = enabled
        self.blockingCount = blockingCount
        self.identificationCount = identificationCount
    }

    public static var dbusSignature: Signature { "(sbtt)" }
    public var dbusValue: DBusValue { .structure([.string(app), .bool(enabled), .uint64(blockingCount), .uint64(identificationCount)]) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        let (app, enabled, blocking, identification) = try Self.members(of: dbusValue, "directory", String.self, Bool.self, UInt64.self, UInt64.self)
        self.init(app: app, enabled: enabled, blockingCount: blocking, identificationCount: identification)
    }
}

/// A contact's number with its label (`(ss)` in `AddressBook.Search`): "mobile", "home", "work",
/// "main", "fax", "pager", "car", "other", or "" when the address book gives none.
public struct LabeledNumber: DBusRepresentable, Sendable, Equatable {
    public var label: String
    public var number: String

    public init(label: String, number: String) {
        self.label = label
        self.number = number
    }

    public static var dbusSignature: Signature { "(ss)" }
    public var dbusValue: DBusValue { .structure([.string(label), .string(number)]) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        let (label, number) = try Self.members(of: dbusValue, "number", String.self, String.self)
        self.init(label: label, number: number)
    }
}
