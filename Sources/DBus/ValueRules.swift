/// What a value must be to be sent, and the errors that say it is not: one
/// wording whether libdbus' iterators (`Marshal`) or `WireWriter` write it.
enum ValueRules {
    /// A dictionary key must be one of these types.
    static func isBasicKey(_ key: Signature) -> Bool {
        key.rawValue.utf8.count == 1 && key.rawValue.utf8.first.map(basicCodes.contains) == true
    }

    private static let basicCodes = Set("ybnqiuxtdsogh".utf8)

    static func mixedArray(_ element: Signature, holding item: DBusValue) -> DBusError {
        .invalidArgs("array of '\(element)' holds a value of type '\(item.signature)'")
    }

    static func notBasicKey(_ key: Signature) -> DBusError {
        .invalidArgs("dictionary key type '\(key)' is not a basic type")
    }

    static func mixedDictionary(_ key: Signature, _ value: Signature, holding entry: (key: DBusValue, value: DBusValue)) -> DBusError {
        .invalidArgs("dictionary of '{\(key)\(value)}' holds an entry of type '{\(entry.key.signature)\(entry.value.signature)}'")
    }

    static let emptyStruct = DBusError.invalidArgs("a struct needs at least one member")
    /// libdbus would cut a string at a NUL; it is refused instead.
    static let nulInString = DBusError.invalidArgs("strings may not contain NUL characters")
}
