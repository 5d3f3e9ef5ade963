import AddressBook
import DBus
import MonkeyCallAPI
import PeopleSearch

/// `AddressBook` on the root object: the user's contacts, searched in the index the service keeps
/// for naming callers (`PeopleFinder`), for the Phone app and other host tools. Host callers
/// only: `SandboxGrants` gives a sandboxed app none of it.
@TelephonyActor
final class AddressBookInterface: ServiceObject {
    private let finder: PeopleFinder

    init(finder: PeopleFinder) {
        self.finder = finder
    }

    func interface() -> Interface {
        typealias API = Telephony1.AddressBook
        return Interface(API.interface) {
            methodReplyingLater(API.search) { book, reply, query, limit in
                guard query.utf8.count <= API.maximumQueryBytes else {
                    throw DBusError.invalidArgs("query: at most \(API.maximumQueryBytes) bytes, got \(query.utf8.count)")
                }
                guard limit <= API.maximumLimit else {
                    throw DBusError.invalidArgs("limit: at most \(API.maximumLimit) (0 means \(API.defaultLimit)), got \(limit)")
                }
                let query = SearchQuery(query, numbering: book.finder.numbering)
                let count = Int(limit == 0 ? API.defaultLimit : limit)
                // Encoded off the service's queue too: a thousand contacts are a big reply. Never
                // replaced: each search is answered (the Phone app waits for each).
                try book.finder.search(for: SearchQueue.Requester(reply.call), { indexes in
                    indexes.contacts.search(query, limit: count).map { Self.encode($0.contact, favorites: indexes.favoriteNumbers) }
                }, answer: { reply.send($0 ?? []) })
            }
            property(API.count) { book in UInt32(clamping: book.finder.contactCount) }
            Signal(API.changed)
        }
    }

    nonisolated static func encode(_ contact: ContactEntry, favorites: Set<Int64>) -> [String: DBusValue] {
        var record = Telephony1.Contact()
        let hex = String(contact.id, radix: 16)
        record.id = String(repeating: "0", count: 16 - hex.count) + hex
        record.name = contact.name
        record.numbers = contact.phones.map { LabeledNumber(label: $0.label, number: $0.number) }
        record.isFavorite = contact.phones.contains { favorites.contains($0.e164) }
        return record.entries
    }
}
