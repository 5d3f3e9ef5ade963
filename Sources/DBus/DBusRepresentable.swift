/// A Swift type with a fixed D-Bus type: typed encoding and decoding of values.
public protocol DBusRepresentable {
    static var dbusSignature: Signature { get }
    /// Decodes; a value of another type is `InvalidArgs`.
    init(dbusValue: DBusValue) throws(DBusError)
    var dbusValue: DBusValue { get }
}

extension DBusRepresentable {
    static func mismatch(_ value: DBusValue) -> DBusError {
        DBusError.invalidArgs("expected a value of type '\(dbusSignature)', got '\(value.signature)'")
    }
}

extension DBusRepresentable {
    /// The members of `value`, a structure of `types` in order (this type's signature: `(ss)` is
    /// `String.self, String.self`), for a structure type's `init(dbusValue:)`. Any other value is
    /// `InvalidArgs`, "malformed `what`: expected (ss), got '…'". Inlinable: a record decodes a
    /// contact's numbers with it, thousands at a time, in the modules that use it.
    @inlinable
    public static func members<each T: DBusRepresentable>(of value: DBusValue, _ what: String,
                                                          _ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        func malformed() -> DBusError { .invalidArgs("malformed \(what): expected \(dbusSignature), got '\(value.signature)'") }
        guard case .structure(let members) = value else { throw malformed() }
        var index = 0
        func next<U: DBusRepresentable>(_: U.Type) throws(DBusError) -> U {
            defer { index += 1 }
            guard index < members.count, let member = try? U(dbusValue: members[index]) else { throw malformed() }
            return member
        }
        let decoded = (repeat try next(each types))
        guard index == members.count else { throw malformed() }
        return decoded
    }
}

// Basic types: one line each, through a case path.
private protocol BasicDBusValue: DBusRepresentable {
    static func extract(_ value: DBusValue) -> Self?
}

extension BasicDBusValue {
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard let value = Self.extract(dbusValue) else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt8: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "y" }
    public var dbusValue: DBusValue { .byte(self) }
    fileprivate static func extract(_ value: DBusValue) -> UInt8? { if case .byte(let v) = value { v } else { nil } }
}
extension Bool: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "b" }
    public var dbusValue: DBusValue { .bool(self) }
    fileprivate static func extract(_ value: DBusValue) -> Bool? { if case .bool(let v) = value { v } else { nil } }
}
extension Int16: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "n" }
    public var dbusValue: DBusValue { .int16(self) }
    fileprivate static func extract(_ value: DBusValue) -> Int16? { if case .int16(let v) = value { v } else { nil } }
}
extension UInt16: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "q" }
    public var dbusValue: DBusValue { .uint16(self) }
    fileprivate static func extract(_ value: DBusValue) -> UInt16? { if case .uint16(let v) = value { v } else { nil } }
}
extension Int32: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "i" }
    public var dbusValue: DBusValue { .int32(self) }
    fileprivate static func extract(_ value: DBusValue) -> Int32? { if case .int32(let v) = value { v } else { nil } }
}
extension UInt32: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "u" }
    public var dbusValue: DBusValue { .uint32(self) }
    fileprivate static func extract(_ value: DBusValue) -> UInt32? { if case .uint32(let v) = value { v } else { nil } }
}
extension Int64: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "x" }
    public var dbusValue: DBusValue { .int64(self) }
    fileprivate static func extract(_ value: DBusValue) -> Int64? { if case .int64(let v) = value { v } else { nil } }
}
extension UInt64: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "t" }
    public var dbusValue: DBusValue { .uint64(self) }
    fileprivate static func extract(_ value: DBusValue) -> UInt64? { if case .uint64(let v) = value { v } else { nil } }
}
extension Double: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "d" }
    public var dbusValue: DBusValue { .double(self) }
    fileprivate static func extract(_ value: DBusValue) -> Double? { if case .double(let v) = value { v } else { nil } }
}
extension String: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "s" }
    public var dbusValue: DBusValue { .string(self) }
    fileprivate static func extract(_ value: DBusValue) -> String? { if case .string(let v) = value { v } else { nil } }
}
extension ObjectPath: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "o" }
    public var dbusValue: DBusValue { .objectPath(self) }
    fileprivate static func extract(_ value: DBusValue) -> ObjectPath? { if case .objectPath(let v) = value { v } else { nil } }
}
extension Signature: DBusRepresentable, BasicDBusValue {
    public static var dbusSignature: Signature { "g" }
    public var dbusValue: DBusValue { .signature(self) }
    fileprivate static func extract(_ value: DBusValue) -> Signature? { if case .signature(let v) = value { v } else { nil } }
}
extension UnixFD: DBusRepresentable {
    public static var dbusSignature: Signature { "h" }
    public var dbusValue: DBusValue { .unixFD(self) }
    public convenience init(dbusValue: DBusValue) throws(DBusError) {
        guard case .unixFD(let fd) = dbusValue else { throw Self.mismatch(dbusValue) }
        try self.init(duplicating: fd.rawValue)
    }
}

/// `DBusValue` stands for a variant (`v`).
extension DBusValue: DBusRepresentable {
    public static var dbusSignature: Signature { "v" }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .variant(let inner) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = inner
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusSignature: Signature { Signature(unchecked: "a" + Element.dbusSignature.rawValue) }
    // A closure, not `map(\.dbusValue)`: a key path to a protocol requirement goes through the
    // runtime (`swift_getAtKeyPath`) for each element.
    public var dbusValue: DBusValue { .array(element: Element.dbusSignature, map { $0.dbusValue }) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .array(let element, let items) = dbusValue, element == Element.dbusSignature else { throw Self.mismatch(dbusValue) }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try Element(dbusValue: item)) }
        self = result
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    public static var dbusSignature: Signature {
        Signature(unchecked: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
    public var dbusValue: DBusValue {
        // The common `a{sv}` (an action's arguments, a Recents entry, each interface of an
        // InterfacesAdded) without a witness call per entry: reached through the conformance, as
        // `Args.encode` reaches it, this generic code is not specialized, and took 20,000
        // instructions for a PerformAction's arguments (callgrind, 2026-11-28).
        if Key.self == String.self, Value.self == DBusValue.self {
            return .dictionary(key: "s", value: "v", unsafeBitCast(self, to: [String: DBusValue].self).map { (key: .string($0.key), value: .variant($0.value)) })
        }
        return .dictionary(key: Key.dbusSignature, value: Value.dbusSignature, map { (key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(let k, let v, let entries) = dbusValue, k == Key.dbusSignature, v == Value.dbusSignature else {
            throw Self.mismatch(dbusValue)
        }
        var result: [Key: Value] = [:]
        for entry in entries { result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = result
    }
}
