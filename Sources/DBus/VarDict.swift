/// Typed reading of an option dictionary (`a{sv}`): unknown keys are ignored,
/// a known key with the wrong type is `InvalidArgs` naming the key.
public struct VarDict: Sendable {
    public let entries: [String: DBusValue]
    /// Names what the dictionary is, for error messages ("configuration", "update").
    public let context: String

    public init(_ entries: [String: DBusValue], context: String) {
        self.entries = entries
        self.context = context
    }

    public init(_ value: DBusValue, context: String) throws(DBusError) {
        guard let entries = value.vardict else { throw DBusError.invalidArgs("\(context) must be of type 'a{sv}', got '\(value.signature)'") }
        self.init(entries, context: context)
    }

    public func contains(_ key: String) -> Bool { entries[key] != nil }

    /// The value of `key` as `T`, nil when absent.
    public func get<T: DBusRepresentable>(_ key: String, as type: T.Type = T.self) throws(DBusError) -> T? {
        guard let value = entries[key] else { return nil }
        do {
            return try T(dbusValue: value)
        } catch {
            throw DBusError.invalidArgs("\(context) key '\(key)' must be of type '\(T.dbusSignature)', got '\(value.signature)'")
        }
    }

    /// The value of `key` as `T`, or `defaultValue` when absent.
    public func get<T: DBusRepresentable>(_ key: String, default defaultValue: T) throws(DBusError) -> T {
        try get(key, as: T.self) ?? defaultValue
    }
}
