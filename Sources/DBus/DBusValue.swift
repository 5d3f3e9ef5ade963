/// Any D-Bus value, with its type. Containers keep their element signature so
/// that empty arrays and dictionaries still know what they are.
public enum DBusValue: Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    case unixFD(UnixFD)
    /// An array of values whose type is `element` (never a dict entry: see `dictionary`).
    indirect case array(element: Signature, [DBusValue])
    /// `a{kv}`: the key is a basic type. Order is kept as sent.
    indirect case dictionary(key: Signature, value: Signature, [(key: DBusValue, value: DBusValue)])
    indirect case structure([DBusValue])
    indirect case variant(DBusValue)

    /// The value's complete type.
    public var signature: Signature {
        Signature(unchecked: signatureString)
    }

    var signatureString: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): "a" + element.rawValue
        case .dictionary(let key, let value, _): "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let members): "(" + members.map(\.signatureString).joined() + ")"
        case .variant: "v"
        }
    }
}

extension DBusValue: Equatable {
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case let (.byte(a), .byte(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.int16(a), .int16(b)): a == b
        case let (.uint16(a), .uint16(b)): a == b
        case let (.int32(a), .int32(b)): a == b
        case let (.uint32(a), .uint32(b)): a == b
        case let (.int64(a), .int64(b)): a == b
        case let (.uint64(a), .uint64(b)): a == b
        case let (.double(a), .double(b)): a == b || (a.isNaN && b.isNaN)
        case let (.string(a), .string(b)): a == b
        case let (.objectPath(a), .objectPath(b)): a == b
        case let (.signature(a), .signature(b)): a == b
        case let (.unixFD(a), .unixFD(b)):
            // Two descriptors are the same value when they refer to the same open file.
            if a === b { true } else if let ia = a.identity, let ib = b.identity { ia == ib } else { false }
        case let (.array(ea, a), .array(eb, b)): ea == eb && a == b
        case let (.dictionary(ka, va, a), .dictionary(kb, vb, b)):
            ka == kb && va == vb && a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.structure(a), .structure(b)): a == b
        case let (.variant(a), .variant(b)): a == b
        default: false
        }
    }
}

extension DBusValue: CustomStringConvertible {
    /// A GVariant-like text form, for logs and the CLI.
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        // The numbers, booleans and descriptors as they print themselves.
        case .bool(let v as any CustomStringConvertible), .int16(let v as any CustomStringConvertible),
             .uint16(let v as any CustomStringConvertible), .int32(let v as any CustomStringConvertible),
             .uint32(let v as any CustomStringConvertible), .int64(let v as any CustomStringConvertible),
             .uint64(let v as any CustomStringConvertible), .double(let v as any CustomStringConvertible),
             .unixFD(let v as any CustomStringConvertible):
            "\(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "objectpath '\(v)'"
        case .signature(let v): "signature '\(v)'"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let members): "(" + members.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): "<\(v)>"
        }
    }
}

extension DBusValue {
    /// The value inside a variant, or the value itself.
    public var unwrappedVariant: DBusValue {
        if case .variant(let inner) = self { return inner.unwrappedVariant }
        return self
    }

    /// The contents of a variant dictionary (`a{sv}`), with variants unwrapped one level.
    public var vardict: [String: DBusValue]? {
        guard case .dictionary(_, let valueSignature, let entries) = self, valueSignature.rawValue == "v" else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else { return nil }
            result[key] = value
        }
        return result
    }

    /// Builds an `a{sv}` from a Swift dictionary, sorted by key so output is stable.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.sorted { $0.key < $1.key }.map { (key: .string($0.key), value: .variant($0.value)) })
    }
}
