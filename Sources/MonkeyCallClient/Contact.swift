import DBus
import MonkeyCallAPI

/// One contact of `AddressBook.Search`.
public struct Contact: Sendable, Equatable {
    public var id: String
    public var name: String
    /// (label, number as written).
    public var numbers: [(label: String, number: String)]
    public var isFavorite: Bool

    public init(id: String, name: String, numbers: [(label: String, number: String)], isFavorite: Bool) {
        (self.id, self.name, self.numbers, self.isFavorite) = (id, name, numbers, isFavorite)
    }

    public init(_ fields: [String: DBusValue]) {
        func string(_ key: String) -> String { fields[key].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
        id = string("Id")
        name = string("Name")
        isFavorite = fields["IsFavorite"].flatMap { try? Bool(dbusValue: $0.unwrappedVariant) } ?? false
        var numbers: [(String, String)] = []
        if case .array(_, let items)? = fields["Numbers"]?.unwrappedVariant {
            for item in items {
                if case .structure(let members) = item, members.count == 2, case .string(let label) = members[0], case .string(let number) = members[1] {
                    numbers.append((label, number))
                }
            }
        }
        self.numbers = numbers
    }

    public static func == (lhs: Contact, rhs: Contact) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.isFavorite == rhs.isFavorite
            && lhs.numbers.map(\.label) == rhs.numbers.map(\.label) && lhs.numbers.map(\.number) == rhs.numbers.map(\.number)
    }
}
