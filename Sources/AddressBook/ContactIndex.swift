import Synchronization

/// A contact as its source knows it: a vCard file (`vcf:/path`, uid = the card's place in the
/// file) or an EDS address book (`eds:<ESource UID>`, uid = the contact's UID).
public struct ContactKey: Sendable, Hashable, Comparable {
    public let source: String
    public let uid: String

    public static func < (a: ContactKey, b: ContactKey) -> Bool { (a.source, a.uid) < (b.source, b.uid) }
}

/// One of a contact's phone numbers: its label (`ContactPhone.label(types:)`: "mobile", "home"…,
/// or ""), the number as the address book writes it, and its E.164 form (the index's key).
public struct ContactPhone: Sendable, Hashable {
    public var label: String
    public var number: String
    public var e164: Int64
}

/// One change from a source. Changes arrive in batches; a batch is applied whole and
/// published as one snapshot.
public enum ContactChange: Sendable, Hashable {
    /// Added or edited: replaces whatever `key` had. No numbers (or an empty name) is a removal.
    case set(ContactKey, name: String, phones: [ContactPhone])
    case remove(ContactKey)
    /// Everything from a source: a vCard file deleted, an address book removed or disabled, EDS gone.
    case removeSource(String)

    /// A contact known only by its E.164 numbers (no labels; written as `+` and the digits).
    public static func set(_ key: ContactKey, name: String, numbers: [Int64]) -> ContactChange {
        .set(key, name: name, phones: numbers.map { ContactPhone(label: "", number: "+\($0)", e164: $0) })
    }
}

/// A contact as a search reads it from a snapshot.
public struct ContactEntry: Sendable {
    /// Stable while the contact exists: its source and its key there, hashed (never 0).
    public let id: UInt64
    public let name: String
    /// Its numbers, in the order the address book gives them, each once.
    public let phones: [ContactPhone]
}

/// What lookups read: an immutable map from E.164 numbers to names. Sendable and never
/// changed once made, so any thread may hold one and read it without a lock.
///
/// It holds the index's own lookup tables (numbers to contact slots, and the names and what a
/// search shows, `ContactCard`, by slot), not a copy made for it: they are copy-on-write, so the index copies them once, when
/// the next batch changes them (the published snapshot still holds them then), and never
/// keeps a second names table of its own.
public final class ContactSnapshot: Sendable {
    /// Counts the batches applied since the index was made.
    public let generation: UInt64
    /// How many contacts with at least one number the index holds.
    public let contactCount: Int
    private let owners: [Int64: UInt32]
    private let names: ContiguousArray<String>
    /// What a search shows besides the name, by slot (a free slot's id is 0).
    private let cards: ContiguousArray<ContactCard>

    init(generation: UInt64, contactCount: Int, owners: [Int64: UInt32], names: ContiguousArray<String>, cards: ContiguousArray<ContactCard>) {
        self.generation = generation
        self.contactCount = contactCount
        self.owners = owners
        self.names = names
        self.cards = cards
    }

    public static let empty = ContactSnapshot(generation: 0, contactCount: 0, owners: [:], names: [], cards: [])

    /// The contacts' slots are `0..<slotCount`; some are free (`contact(at:)` is nil).
    public var slotCount: Int { names.count }

    /// The contact in `slot`, or nil when the slot is free.
    public func contact(at slot: Int) -> ContactEntry? {
        let card = cards[slot]
        guard card.id != 0 else { return nil }
        return ContactEntry(id: card.id, name: names[slot], phones: card.phones)
    }

    /// The slot of the contact that names this E.164 number.
    public func slot(of number: Int64) -> Int? { owners[number].map(Int.init) }

    /// The name of the contact with this E.164 number (as `PhoneNumber.normalize` gives it).
    public func name(for number: Int64) -> String? {
        guard let slot = owners[number] else { return nil }
        return names[Int(slot)]
    }

    /// How many numbers have a name.
    public var numberCount: Int { owners.count }
}

/// The index from numbers to names, updated by batches of changes and read through snapshots.
///
/// Reading never waits on indexing: the writer (the address book's queue) applies a batch to
/// its own tables, builds the next snapshot, and only then takes `published`'s lock for as
/// long as it takes to swap one reference. A lookup takes the same lock for as long as it
/// takes to copy (retain) that reference, so the most a reader can wait is one pointer swap,
/// never a parse, a file read or EDS. (A lock-free `Atomic` of a class reference would need
/// hand-made retain counting around the swap; an uncontended `Mutex` is one atomic
/// compare-and-swap in and one out, and is obviously correct.) Callers that look up many
/// numbers may keep a `snapshot` and read it without any lock at all.
///
/// The tables are laid out for an idle daemon's memory (its goal: 24 MiB with 1,000 contacts):
/// every contact is a slot in contiguous arrays, and a contact with one number and a short
/// name (15 bytes of UTF-8 or fewer, kept inline by `String`) costs no heap object of its own.
/// Sources are interned as small integers, their contacts chained through the slots; numbers
/// map to the slot of the contact that names them, and only a number two contacts share has
/// a list of the others.
public final class ContactIndex: Sendable {
    private let published = Mutex(ContactSnapshot.empty)
    private let tables = Mutex(Tables())

    public init() {}

    /// The current snapshot (see the type's comment).
    public var snapshot: ContactSnapshot { published.withLock { $0 } }

    public func lookup(_ number: Int64) -> String? { snapshot.name(for: number) }

    /// Applies a batch and publishes it; returns the new snapshot, or nil when nothing changed.
    @discardableResult
    public func apply(_ changes: [ContactChange]) -> ContactSnapshot? {
        guard !changes.isEmpty else { return nil }
        let next: ContactSnapshot? = tables.withLock { tables in
            tables.reserve(changes.count)
            var changed = false
            for change in changes {
                switch change {
                case .set(let key, let name, let phones):
                    var seen = Set<Int64>()
                    let distinct = phones.count > 1 ? phones.filter { seen.insert($0.e164).inserted } : phones
                    var unique = distinct.count > 1 ? distinct.map(\.e164).sorted() : distinct.map(\.e164)
                    if name.isEmpty { unique = [] }
                    changed = tables.set(key, name: name, numbers: unique, phones: distinct) || changed
                case .remove(let key):
                    changed = tables.remove(key) || changed
                case .removeSource(let source):
                    changed = tables.removeSource(source) || changed
                }
            }
            guard changed else { return nil }
            tables.generation += 1
            return ContactSnapshot(generation: tables.generation, contactCount: tables.count, owners: tables.owners, names: tables.names,
                                   cards: tables.cards)
        }
        if let next { published.withLock { $0 = next } }
        return next
    }

    /// The sources that have contacts now (`vcf:…`, `eds:…`).
    public var sources: Set<String> { tables.withLock { Set($0.sourceIDs.keys) } }
}

/// What a search shows of a contact besides its name: its id and its numbers as written, with
/// their labels. Kept by slot beside the names; a free slot's id is 0. The first number is kept
/// in place: a contact with one number (most have one) costs no heap object here.
struct ContactCard: Sendable {
    var id: UInt64
    var first: ContactPhone
    var more: [ContactPhone]

    init(id: UInt64, phones: [ContactPhone]) {
        self.id = id
        first = phones.first ?? ContactPhone(label: "", number: "", e164: 0)
        more = phones.count > 1 ? Array(phones.dropFirst()) : []
    }

    var phones: [ContactPhone] { id == 0 ? [] : [first] + more }

    static let free = ContactCard(id: 0, phones: [])

    /// FNV-1a of the source and the key in it: the same contact has the same id in every
    /// snapshot and after a restart. Never 0 (a free slot's).
    static func id(of key: ContactKey) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.source.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0) &* 0x100_0000_01b3
        for byte in key.uid.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash == 0 ? 1 : hash
    }
}

/// The writer's side of the index; only touched under `ContactIndex.tables`' lock.
private struct Tables {
    static let none = UInt32.max

    /// A contact's slot: what it was given, apart from its name (in `names`, for the snapshots).
    struct Slot {
        /// Its source's id, `none` when the slot is free.
        var source: UInt32
        /// The neighbours in its source's chain (or, for a free slot, the next free one).
        var previous: UInt32
        var next: UInt32
        var uid: String
        /// Its numbers, sorted and distinct: the first, and any others (most contacts have one).
        var first: Int64
        var more: [Int64]
    }

    struct Source {
        var name: String
        var head: UInt32
    }

    /// A contact's key with its source interned.
    struct Key: Hashable {
        let source: UInt32
        let uid: String
    }

    var slots: ContiguousArray<Slot> = []
    var names: ContiguousArray<String> = []
    var cards: ContiguousArray<ContactCard> = []
    var freeSlots = none
    var count = 0
    var keys: [Key: UInt32] = [:]

    var sources: ContiguousArray<Source> = []
    var sourceIDs: [String: UInt32] = [:]
    var freeSources: [UInt32] = []

    /// The slot of the contact that names each number: of all the contacts with the number, the
    /// first in key order, so which of two wins does not depend on the order they arrived in.
    var owners: [Int64: UInt32] = [:]
    /// The other contacts with a number, in key order, for the numbers more than one contact has.
    var sharers: [Int64: [UInt32]] = [:]
    var generation: UInt64 = 0

    /// Room for `more` contacts, made once: a source's first read (1,000 files) then grows no table
    /// by doubling, which would leave each table's smaller copies freed between what stays.
    mutating func reserve(_ more: Int) {
        guard more > 1 else { return }
        slots.reserveCapacity(slots.count + more)
        names.reserveCapacity(slots.count + more)
        cards.reserveCapacity(slots.count + more)
        keys.reserveCapacity(count + more)
        owners.reserveCapacity(count + more)
    }

    /// Replaces what `key` had; `numbers` sorted and distinct, empty for a removal; `phones` the
    /// same numbers as written, in the contact's order.
    mutating func set(_ key: ContactKey, name: String, numbers: [Int64], phones: [ContactPhone]) -> Bool {
        guard let first = numbers.first else { return remove(key) }
        let card = ContactCard(id: ContactCard.id(of: key), phones: phones.map(Self.compact))
        if let source = sourceIDs[key.source], let slot = keys[Key(source: source, uid: key.uid)] {
            let old = slots[Int(slot)]
            if old.first == first, old.more.elementsEqual(numbers.dropFirst()) {
                // Same numbers: the name alone may change, and precedence with it stays. (A set is
                // published even when nothing changed, as a removal and an insertion would be.)
                names[Int(slot)] = name
                cards[Int(slot)] = card
                return true
            }
            unlink(slot) // Before interning: it may have been its source's last contact.
        }
        let source = intern(key.source)
        let slot = allocate(Slot(source: source, previous: Self.none, next: sources[Int(source)].head, uid: Self.compact(key.uid),
                                 first: first, more: numbers.count > 1 ? Array(numbers.dropFirst()) : []), name: Self.compact(name), card: card)
        if sources[Int(source)].head != Self.none { slots[Int(sources[Int(source)].head)].previous = slot }
        sources[Int(source)].head = slot
        keys[Key(source: source, uid: key.uid)] = slot
        for number in numbers { own(number, slot) }
        return true
    }

    mutating func remove(_ key: ContactKey) -> Bool {
        guard let source = sourceIDs[key.source], let slot = keys[Key(source: source, uid: key.uid)] else { return false }
        unlink(slot)
        return true
    }

    mutating func removeSource(_ name: String) -> Bool {
        guard let source = sourceIDs[name] else { return false }
        // A source is interned exactly as long as it has contacts: the last one unlinked frees it.
        while sourceIDs[name] == source { unlink(sources[Int(source)].head) }
        return true
    }

    /// The string in storage of its own size: a parser's strings grow by appending and keep
    /// their spare capacity; one of 15 bytes or fewer becomes a small string, with no storage at all.
    private static func compact(_ text: String) -> String {
        text.utf8.withContiguousStorageIfAvailable { String(decoding: $0, as: UTF8.self) } ?? text
    }

    private static func compact(_ phone: ContactPhone) -> ContactPhone {
        ContactPhone(label: phone.label, number: compact(phone.number), e164: phone.e164)
    }

    // MARK: Slots and sources

    private mutating func intern(_ name: String) -> UInt32 {
        if let id = sourceIDs[name] { return id }
        let id: UInt32
        if let free = freeSources.popLast() {
            id = free
            sources[Int(id)] = Source(name: name, head: Self.none)
        } else {
            id = UInt32(sources.count)
            sources.append(Source(name: name, head: Self.none))
        }
        sourceIDs[name] = id
        return id
    }

    private mutating func allocate(_ slot: Slot, name: String, card: ContactCard) -> UInt32 {
        count += 1
        if freeSlots != Self.none {
            let index = freeSlots
            freeSlots = slots[Int(index)].next
            slots[Int(index)] = slot
            names[Int(index)] = name
            cards[Int(index)] = card
            return index
        }
        slots.append(slot)
        names.append(name)
        cards.append(card)
        return UInt32(slots.count - 1)
    }

    /// Takes the contact out of every table and frees its slot (and its source, when it was the last).
    private mutating func unlink(_ index: UInt32) {
        let slot = slots[Int(index)]
        disown(slot.first, index)
        for number in slot.more { disown(number, index) }
        keys[Key(source: slot.source, uid: slot.uid)] = nil
        if slot.previous != Self.none { slots[Int(slot.previous)].next = slot.next } else { sources[Int(slot.source)].head = slot.next }
        if slot.next != Self.none { slots[Int(slot.next)].previous = slot.previous }
        if sources[Int(slot.source)].head == Self.none {
            sourceIDs[sources[Int(slot.source)].name] = nil
            sources[Int(slot.source)].name = ""
            freeSources.append(slot.source)
        }
        slots[Int(index)] = Slot(source: Self.none, previous: Self.none, next: freeSlots, uid: "", first: 0, more: [])
        names[Int(index)] = ""
        cards[Int(index)] = .free
        freeSlots = index
        count -= 1
        // A table left mostly free after a large source went is made small again.
        if count == 0 {
            slots = []
            names = []
            cards = []
            freeSlots = Self.none
            sources = []
            freeSources = []
        }
    }

    private func precedes(_ a: UInt32, _ b: UInt32) -> Bool {
        let x = slots[Int(a)], y = slots[Int(b)]
        if x.source == y.source { return x.uid < y.uid }
        return sources[Int(x.source)].name < sources[Int(y.source)].name
    }

    // MARK: Numbers

    private mutating func own(_ number: Int64, _ slot: UInt32) {
        guard let owner = owners[number] else {
            owners[number] = slot
            return
        }
        var others = sharers.removeValue(forKey: number) ?? []
        if precedes(slot, owner) {
            owners[number] = slot
            others.insert(owner, at: 0)
        } else {
            others.insert(slot, at: others.firstIndex { precedes(slot, $0) } ?? others.endIndex)
        }
        sharers[number] = others
    }

    private mutating func disown(_ number: Int64, _ slot: UInt32) {
        if owners[number] == slot {
            if var others = sharers.removeValue(forKey: number) {
                owners[number] = others.removeFirst()
                if !others.isEmpty { sharers[number] = others }
            } else {
                owners[number] = nil
            }
        } else if var others = sharers.removeValue(forKey: number) {
            others.removeAll { $0 == slot }
            if !others.isEmpty { sharers[number] = others }
        }
    }
}
