/// A D-Bus object path such as `/org/monkeycall/Telephony1`, validated on creation.
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral, CheckedString {
    static let kind = "object path"
    public let rawValue: String

    public static let root = ObjectPath(unchecked: "/")

    public init(_ rawValue: String) throws(DBusError) { self.rawValue = try Self.checked(rawValue) }

    public init(stringLiteral value: String) { self.rawValue = Self.checkedLiteral(value) }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The path with one more element appended; the element must be `[A-Za-z0-9_]+`.
    public func appending(_ element: String) -> ObjectPath {
        precondition(!element.isEmpty && element.utf8.allSatisfy(ObjectPath.isElementByte), "invalid path element '\(element)'")
        return ObjectPath(unchecked: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// True when `self` lies strictly below `ancestor`.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" { return rawValue != "/" }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    /// The element names of the path (`/a/b` → `["a", "b"]`).
    /// Split as bytes: a path is ASCII, and splitting by `Character` costs a grapheme break a byte.
    public var elements: [Substring] {
        rawValue.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
    }

    /// The element right below `ancestor` (`/a/b/c` below `/a` → `b`); nil when `self` is not below it.
    public func element(below ancestor: ObjectPath) -> Substring? {
        guard isDescendant(of: ancestor) else { return nil }
        let utf8 = rawValue.utf8
        // Past the ancestor and its "/" (the root is "/" alone).
        let start = utf8.index(utf8.startIndex, offsetBy: ancestor.rawValue == "/" ? 1 : ancestor.rawValue.utf8.count + 1)
        let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
        return Substring(utf8[start..<end])
    }

    static func isElementByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    static func isValid(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                guard isElementByte(byte) else { return false }
                previousSlash = false
            }
        }
        return true
    }
}
