/// A D-Bus type signature such as `a{sv}`: zero or more complete types.
///
/// Validated on creation, because libdbus aborts the process on an invalid
/// signature instead of returning an error.
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, CheckedString {
    public let rawValue: String

    public init(_ rawValue: String) throws(DBusError) { self.rawValue = try Self.checked(rawValue) }

    /// For signatures written in the code; an invalid literal is a programming error.
    public init(stringLiteral value: String) { self.rawValue = Self.checkedLiteral(value) }

    static let kind = "signature"

    static func isValid(_ signature: String) -> Bool { signature.utf8.count <= 255 && completeTypes(in: signature) != nil }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The single complete types this signature is made of (`"sa{sv}"` → `["s", "a{sv}"]`).
    public var completeTypes: [Signature] {
        (Signature.completeTypes(in: rawValue) ?? []).map(Signature.init(unchecked:))
    }

    /// True when the signature is exactly one complete type.
    public var isSingleCompleteType: Bool { completeTypes.count == 1 }

    /// Splits a signature into complete types; nil when it is malformed.
    static func completeTypes(in signature: String) -> [String]? {
        let bytes = Array(signature.utf8)
        var index = 0
        var result: [String] = []
        while index < bytes.count {
            let start = index
            guard parseCompleteType(bytes, &index, depth: 0) else { return nil }
            result.append(String(decoding: bytes[start..<index], as: UTF8.self))
        }
        return result
    }

    private static let basicCodes: Set<UInt8> = Set("ybnqiuxtdsogh".utf8)

    private static func parseCompleteType(_ bytes: [UInt8], _ index: inout Int, depth: Int) -> Bool {
        guard index < bytes.count, depth < 64 else { return false }
        let code = bytes[index]
        index += 1
        switch code {
        case _ where basicCodes.contains(code), UInt8(ascii: "v"):
            return true
        case UInt8(ascii: "a"):
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                guard index < bytes.count, basicCodes.contains(bytes[index]) else { return false }
                index += 1
                guard parseCompleteType(bytes, &index, depth: depth + 1) else { return false }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else { return false }
                index += 1
                return true
            }
            return parseCompleteType(bytes, &index, depth: depth + 1)
        case UInt8(ascii: "("):
            var members = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                guard parseCompleteType(bytes, &index, depth: depth + 1) else { return false }
                members += 1
            }
            guard index < bytes.count, members > 0 else { return false }
            index += 1
            return true
        default:
            return false
        }
    }
}

extension Signature {
    /// Joins complete types into one signature.
    public init(concatenating parts: [Signature]) {
        self.init(unchecked: parts.map(\.rawValue).joined())
    }
}
