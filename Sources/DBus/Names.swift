/// Validation of D-Bus names. libdbus aborts the process on an invalid name,
/// so every name that comes from outside is checked here first.
enum Names {
    private static func isNameByte(_ b: UInt8, allowHyphen: Bool) -> Bool {
        ObjectPath.isElementByte(b) || (allowHyphen && b == UInt8(ascii: "-"))
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Dotted names: interface and error names (no hyphens, no leading digits),
    /// well-known bus names (hyphens allowed), unique names (leading ':' and digits allowed).
    private static func isDottedName(_ name: String, allowHyphen: Bool, allowLeadingDigit: Bool) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        for element in elements {
            guard let first = element.first else { return false }
            if !allowLeadingDigit && isDigit(first) { return false }
            guard element.allSatisfy({ isNameByte($0, allowHyphen: allowHyphen) }) else { return false }
        }
        return true
    }

    static func isValidInterface(_ name: String) -> Bool { isDottedName(name, allowHyphen: false, allowLeadingDigit: false) }

    static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 255, !isDigit(first) else { return false }
        return bytes.allSatisfy { isNameByte($0, allowHyphen: false) }
    }

    static func isValidBusName(_ name: String) -> Bool {
        if name.hasPrefix(":") { return isDottedName(String(name.dropFirst()), allowHyphen: true, allowLeadingDigit: true) }
        return isDottedName(name, allowHyphen: true, allowLeadingDigit: false)
    }

    static func validateInterface(_ name: String) throws(DBusError) {
        guard isValidInterface(name) else { throw DBusError.invalidArgs("'\(name.prefix(64))' is not a valid interface name") }
    }
    static func validateErrorName(_ name: String) throws(DBusError) {
        guard isValidInterface(name) else { throw DBusError.invalidArgs("'\(name.prefix(64))' is not a valid error name") }
    }
    static func validateMember(_ name: String) throws(DBusError) {
        guard isValidMember(name) else { throw DBusError.invalidArgs("'\(name.prefix(64))' is not a valid member name") }
    }
    static func validateBusName(_ name: String) throws(DBusError) {
        guard isValidBusName(name) else { throw DBusError.invalidArgs("'\(name.prefix(64))' is not a valid bus name") }
    }
}
