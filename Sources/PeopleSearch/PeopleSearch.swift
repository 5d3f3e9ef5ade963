import AddressBook
import TelephonyVocabulary

/// One result of the system's search: someone to call, and how.
public struct SearchHit: Sendable, Hashable {
    public enum Source: String, Sendable, CaseIterable {
        /// What the user typed, called as it is.
        case number
        case favorite, contact, recent
    }

    public var source: Source
    /// The name to show; "" for a typed number or an unnamed Recents entry.
    public var name: String
    /// What the call goes to: E.164 (`+…`) for a contact's number, the handle of a favorite or a
    /// Recents entry, the digits as typed.
    public var handle: String
    public var handleType: String
    /// The number as the user knows it: as the contact writes it, as typed, or the handle.
    public var shown: String
    /// A contact's number's label ("mobile"…), else "".
    public var label: String
    /// The app of the favorite or the Recents entry ("" for the others): it calls, when it can.
    public var appKey: String
    /// It is what was typed: the whole name, the whole number (not carried by `id`).
    public var isExact = false

    public init(source: Source, name: String, handle: String, handleType: String, shown: String, label: String = "", appKey: String = "") {
        (self.source, self.name, self.handle, self.handleType, self.shown, self.label, self.appKey) = (source, name, handle, handleType, shown, label, appKey)
    }

    /// The id a search provider hands out and gets back (`ActivateResult`, `Run`): everything
    /// needed to show and call the result, so that the service keeps nothing per search. Fields
    /// joined by `:`, each with `%`, `:` and control characters percent-encoded.
    public var id: String {
        [source.rawValue, handleType, appKey, handle, name, shown, label].map(Self.escape).joined(separator: ":")
    }

    /// The result an id names; nil for anything a provider never handed out.
    public init?(id: String) {
        let fields = id.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 7, let source = Source(rawValue: String(fields[0])) else { return nil }
        var values: [String] = []
        for field in fields.dropFirst() {
            guard let value = Self.unescape(field) else { return nil }
            values.append(value)
        }
        guard !values[2].isEmpty, HandleType(rawValue: values[0]) != nil else { return nil }
        self.init(source: source, name: values[3], handle: values[2], handleType: values[0], shown: values[4], label: values[5], appKey: values[1])
    }

    private static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if needsEscape(byte) {
                bytes += Array(("%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)).utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "%") || byte == UInt8(ascii: ":") || byte < 0x20 || byte == 0x7F
    }

    private static func unescape(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// The system's search (GNOME Shell's, KRunner's) over the user's people: favorites, contacts
/// and Recents by name or number, and a typed number as itself. Plain Swift over immutable
/// indexes: no D-Bus, no disk, no waiting.
public enum PeopleSearch {
    /// What the shells show of one provider.
    public static let resultLimit = 5

    /// The results for `query`, best first: the typed number (when it is one and no result below
    /// calls that very number), then favorites, contacts and Recents, each best match first
    /// (a whole name, then a name's start, then any word's; a number from its start, then from
    /// within), favorites and contacts then by name, Recents newest first. A person is listed
    /// once: a contact who is a favorite, or whose number is in Recents, is not listed again.
    public static func find(_ query: SearchQuery, favorites: PeopleIndex, contacts: ContactsIndex, recents: PeopleIndex,
                            numbering: ContactNumbering, limit: Int = resultLimit) -> [SearchHit] {
        guard !query.isEmpty, limit > 0 else { return [] }
        var results: [SearchHit] = []
        var listed = Set<PersonKey>()
        // Enough of each kind to fill the list after people already listed are left out.
        let room = limit + 4

        func take(_ hit: SearchHit, key: PersonKey) {
            guard results.count < limit + 1, listed.insert(key).inserted else { return }
            results.append(hit)
        }
        /// Favorites and Recents: people with a handle and the app that calls them.
        func takePeople(_ people: PeopleIndex, as source: SearchHit.Source) {
            for hit in people.index.hits(query, limit: room) {
                let person = people.people[hit.entry]
                var result = SearchHit(source: source, name: person.name, handle: person.handle, handleType: person.handleType,
                                       shown: person.handle, appKey: person.appKey)
                result.isExact = hit.quality == .exact
                take(result, key: people.keys[hit.entry])
            }
        }
        takePeople(favorites, as: .favorite)
        for hit in contacts.index.hits(query, limit: room) {
            let contact = contacts.contact(hit.entry)
            guard let phone = hit.number.map({ contact.phones[$0] }) ?? preferred(contact.phones) else { continue }
            // A contact whose number is a favorite is that favorite.
            if hit.number == nil, contact.phones.contains(where: { listed.contains(.number($0.e164)) }) { continue }
            var result = SearchHit(source: .contact, name: contact.name, handle: "+\(phone.e164)", handleType: HandleType.phoneNumber.rawValue,
                                   shown: phone.number, label: phone.label)
            result.isExact = hit.quality == .exact
            take(result, key: .number(phone.e164))
        }
        takePeople(recents, as: .recent)
        if query.isCallableNumber {
            let dial = query.dialString
            let key = numbering.e164(query.text).map(PersonKey.number) ?? .handle(dial)
            if !listed.contains(key) {
                var typed = SearchHit(source: .number, name: "", handle: dial, handleType: HandleType.phoneNumber.rawValue, shown: query.text)
                typed.isExact = true
                results.insert(typed, at: 0)
            }
        }
        return Array(results.prefix(limit))
    }

    /// The number a contact found by name is called on: the first mobile one, else the first.
    static func preferred(_ phones: [ContactPhone]) -> ContactPhone? {
        phones.first { $0.label == "mobile" } ?? phones.first
    }
}
