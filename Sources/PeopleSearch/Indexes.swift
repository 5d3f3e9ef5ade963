import AddressBook
import TelephonyVocabulary

/// Who a result is, for telling two results of the same person apart: a number in E.164, or
/// any other handle in lower case.
public enum PersonKey: Hashable, Sendable {
    case number(Int64)
    case handle(String)

    /// The key of a handle as a favorite or Recents keeps it: its E.164 form when it is a phone
    /// number (an email address never is).
    public init(handle: String, type: String, numbering: ContactNumbering) {
        if type != HandleType.emailAddress.rawValue, let number = numbering.e164(handle) {
            self = .number(number)
        } else {
            self = .handle(handle.lowercased())
        }
    }
}

/// The user's contacts laid out for search: built from one snapshot of the address book (on the
/// search's own queue, never the service's), in the order of their folded names, so that
/// results come out sorted. Immutable: any thread may read it.
public final class ContactsIndex: Sendable {
    /// The snapshot it was built from.
    public let snapshot: ContactSnapshot
    public var generation: UInt64 { snapshot.generation }
    /// Entries in name order: the snapshot's slot of each.
    let slots: [UInt32]
    let index: MatchIndex

    public static let empty = ContactsIndex(ContactSnapshot.empty)

    public init(_ snapshot: ContactSnapshot) {
        self.snapshot = snapshot
        var entries: [(folded: String, slot: Int)] = []
        entries.reserveCapacity(snapshot.contactCount)
        for slot in 0..<snapshot.slotCount {
            guard let contact = snapshot.contact(at: slot) else { continue }
            entries.append((SearchText.fold(contact.name), slot))
        }
        entries.sort { ($0.folded, $0.slot) < ($1.folded, $1.slot) }
        var index = MatchIndex()
        var slots: [UInt32] = []
        slots.reserveCapacity(entries.count)
        for entry in entries {
            let contact = snapshot.contact(at: entry.slot)!
            index.append(foldedName: entry.folded, numbers: contact.phones.map { String($0.e164) })
            slots.append(UInt32(entry.slot))
        }
        self.slots = slots
        self.index = index
    }

    /// How many contacts it holds.
    public var count: Int { slots.count }

    /// The contact of entry `entry`, in name order.
    public func contact(_ entry: Int) -> ContactEntry { snapshot.contact(at: Int(slots[entry]))! }

    /// The contacts that match `query`, best first, then by name; every contact by name for an
    /// empty query. `number`: the phone that matched, when a number did.
    public func search(_ query: SearchQuery, limit: Int) -> [(contact: ContactEntry, number: Int?)] {
        if query.isEmpty { return (0..<min(limit, count)).map { (contact($0), nil) } }
        return index.hits(query, limit: limit).prefix(limit).map { (contact($0.entry), $0.number) }
    }
}

/// Someone from Favorites or Recents, as search sees them.
public struct SearchPerson: Sendable, Hashable {
    /// The name to show; "" when there is none (a Recents entry of an unknown number).
    public var name: String
    public var handle: String
    public var handleType: String
    /// The app that called or saved them: the app key (a sandboxed app's id, a host app's Name).
    public var appKey: String

    public init(name: String, handle: String, handleType: String, appKey: String) {
        self.name = name
        self.handle = handle
        self.handleType = handleType
        self.appKey = appKey
    }
}

/// Favorites or Recents laid out for search, in the order given (favorites by name, Recents
/// newest first). Immutable.
public final class PeopleIndex: Sendable {
    /// Which version of the list it was built from (its owner counts the changes).
    public let version: UInt64
    public let people: [SearchPerson]
    let keys: [PersonKey]
    let index: MatchIndex

    public static let empty = PeopleIndex(version: 0, people: [], numbering: ContactNumbering(region: nil))

    public init(version: UInt64, people: [SearchPerson], numbering: ContactNumbering) {
        self.version = version
        self.people = people
        var index = MatchIndex()
        var keys: [PersonKey] = []
        keys.reserveCapacity(people.count)
        for person in people {
            let key = PersonKey(handle: person.handle, type: person.handleType, numbering: numbering)
            keys.append(key)
            // A phone number's E.164 digits, else a handle's own ("sip:1234@pbx").
            let digits: String
            if case .number(let e164) = key { digits = String(e164) } else { digits = person.handleType == HandleType.emailAddress.rawValue ? "" : SearchText.digits(person.handle) }
            index.append(foldedName: SearchText.fold(person.name), numbers: [digits])
        }
        self.keys = keys
        self.index = index
    }

    /// The E.164 numbers among the people's handles.
    public var numbers: [Int64] {
        keys.compactMap { key in
            guard case .number(let number) = key else { return nil }
            return number
        }
    }

    /// Favorites in the order search lists them: by folded name, then handle.
    public static func sortedByName(_ people: [SearchPerson]) -> [SearchPerson] {
        people.map { (SearchText.fold($0.name), $0) }.sorted { ($0.0, $0.1.handle) < ($1.0, $1.1.handle) }.map(\.1)
    }
}
