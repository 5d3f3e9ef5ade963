/// A string D-Bus accepts in one form only (an object path, a signature), checked
/// when it is made: libdbus aborts the process on an invalid one instead of
/// returning an error.
protocol CheckedString {
    /// What the string is, for messages: `object path`.
    static var kind: String { get }
    static func isValid(_ rawValue: String) -> Bool
}

extension CheckedString {
    /// `rawValue`, or an InvalidArgs error naming what it is not.
    static func checked(_ rawValue: String) throws(DBusError) -> String {
        guard isValid(rawValue) else { throw DBusError.invalidArgs("'\(rawValue.prefix(64))' is not a valid D-Bus \(kind)") }
        return rawValue
    }

    /// A literal written in the code; an invalid one is a programming error.
    static func checkedLiteral(_ value: String) -> String {
        guard isValid(value) else { preconditionFailure("invalid D-Bus \(kind) literal '\(value)'") }
        return value
    }
}
