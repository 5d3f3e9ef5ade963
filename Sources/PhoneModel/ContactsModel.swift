import DBus
import Localization
import MonkeyCallClient

public struct ContactRow: Equatable, Sendable {
    public let id: String
    public let name: String
    /// (label, number) as written in the address book.
    public let numbers: [ContactNumber]
    public let isFavorite: Bool
}

public struct ContactNumber: Equatable, Sendable {
    public let label: String
    public let number: String
}

/// Contacts: the user's address book through the service's `AddressBook.Search`, searched as
/// the user types; an answer to an older query than the last is dropped.
public final class ContactsModel: ModelPart {
    public enum Availability: Equatable, Sendable {
        case available
        /// The service has no address book search (an older service): the view says so.
        case unsupported
    }

    public private(set) var query = ""
    public private(set) var rows: [ContactRow] = []
    public private(set) var availability: Availability = .available
    private var generation = 0
    public static let limit: UInt32 = 200

    public func search(_ text: String) async {
        query = text
        generation += 1
        let mine = generation
        do {
            let found = try await backend.searchContacts(text, limit: Self.limit)
            guard mine == generation else { return }
            availability = .available
            rows = found.map { ContactRow(id: $0.id, name: Format.clean($0.name),
                                          numbers: $0.numbers.map { ContactNumber(label: Format.clean($0.label), number: Format.clean($0.number)) },
                                          isFavorite: $0.isFavorite) }
            onChange()
        } catch let error as DBusError where Self.isMissing(error) {
            guard mine == generation else { return }
            availability = .unsupported
            rows = []
            onChange()
        } catch {
            guard mine == generation else { return }
            report.error(error)
        }
    }

    static func isMissing(_ error: DBusError) -> Bool {
        error.name.hasSuffix(".UnknownMethod") || error.name.hasSuffix(".UnknownInterface") || error.name.hasSuffix(".UnknownObject")
    }
}
