import Synchronization

/// A contact as its source knows it: a vCard file (`vcf:/path`, uid = the card's place in the
/// file) or an EDS address book (`eds:<ESource UID>`, uid = the contact's UID).
public struct ContactKey: Sendable, Hashable, Comparable {
    public let source: String
    public let uid: String
    public init(source: String, uid: String) {
        self.source = source
        self.uid = uid
    }

    public static func < (a: ContactKey, b: ContactKey) -> Bool { (a.source, a.uid) < (b.source, b.uid) }
}

/// One change from a source. Changes arrive in batches; a batch is applied whole and
/// published as one snapshot.
public enum ContactChange: Sendable, Hashable {
    /// Added or edited: replaces whatever `key` had. No numbers (or an empty name) is a removal.
    case set(ContactKey, name: String, numbers: [Int64])
    case remove(ContactKey)
    /// Everything from a source: a vCard file deleted, an address book removed or disabled, EDS gone.
    case removeSource(String)
}

/// What lookups read: an immutable map from E.164 numbers to names. Sendable and never
/// changed once made, so any thread may hold one and read it without a lock.
public final class ContactSnapshot: Sendable {
    /// Counts the batches applied since the index was made.
    public let generation: UInt64
    /// How many contacts with at least one number the index holds.
    public let contactCount: Int
    private let names: [Int64: String]

    init(generation: UInt64, contactCount: Int, names: [Int64: String]) {
        self.generation = generation
        self.contactCount = contactCount
        self.names = names
    }

    public static let empty = ContactSnapshot(generation: 0, contactCount: 0, names: [:])

    /// The name of the contact with this E.164 number (as `PhoneNumber.normalize` gives it).
    public func name(for number: Int64) -> String? { names[number] }

    /// How many numbers have a name.
    public var numberCount: Int { names.count }
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
public final class ContactIndex: Sendable {
    private let published = Mutex(ContactSnapshot.empty)
    private let tables = Mutex(Tables())

    private struct Tables {
        var contacts: [ContactKey: (name: String, numbers: [Int64])] = [:]
        var bySource: [String: Set<String>] = [:]
        /// Every contact with the number, in key order: the first one names it, so which of two
        /// contacts sharing a number wins does not depend on the order they arrived in.
        var owners: [Int64: [ContactKey]] = [:]
        var names: [Int64: String] = [:]
        var generation: UInt64 = 0
    }

    public init() {}

    /// The current snapshot (see the type's comment).
    public var snapshot: ContactSnapshot { published.withLock { $0 } }

    public func lookup(_ number: Int64) -> String? { snapshot.name(for: number) }

    /// Applies a batch and publishes it; returns the new snapshot, or nil when nothing changed.
    @discardableResult
    public func apply(_ changes: [ContactChange]) -> ContactSnapshot? {
        guard !changes.isEmpty else { return nil }
        let next: ContactSnapshot? = tables.withLock { tables in
            var changed = false
            for change in changes {
                switch change {
                case .set(let key, let name, let numbers):
                    changed = Self.remove(key, from: &tables) || changed
                    let unique = Array(Set(numbers)).sorted()
                    guard !name.isEmpty, !unique.isEmpty else { continue }
                    Self.insert(key, name: name, numbers: unique, into: &tables)
                    changed = true
                case .remove(let key):
                    changed = Self.remove(key, from: &tables) || changed
                case .removeSource(let source):
                    guard let uids = tables.bySource[source] else { continue }
                    for uid in uids { _ = Self.remove(ContactKey(source: source, uid: uid), from: &tables) }
                    changed = true
                }
            }
            guard changed else { return nil }
            tables.generation += 1
            return ContactSnapshot(generation: tables.generation, contactCount: tables.contacts.count, names: tables.names)
        }
        if let next { published.withLock { $0 = next } }
        return next
    }

    /// The sources that have contacts now (`vcf:…`, `eds:…`).
    public var sources: Set<String> { tables.withLock { Set($0.bySource.keys) } }

    private static func insert(_ key: ContactKey, name: String, numbers: [Int64], into tables: inout Tables) {
        tables.contacts[key] = (name, numbers)
        tables.bySource[key.source, default: []].insert(key.uid)
        for number in numbers {
            var owners = tables.owners[number, default: []]
            let at = owners.firstIndex { key < $0 } ?? owners.endIndex
            owners.insert(key, at: at)
            tables.owners[number] = owners
            if at == 0 { tables.names[number] = name }
        }
    }

    private static func remove(_ key: ContactKey, from tables: inout Tables) -> Bool {
        guard let old = tables.contacts.removeValue(forKey: key) else { return false }
        tables.bySource[key.source]?.remove(key.uid)
        if tables.bySource[key.source]?.isEmpty == true { tables.bySource[key.source] = nil }
        for number in old.numbers {
            guard var owners = tables.owners[number], let at = owners.firstIndex(of: key) else { continue }
            owners.remove(at: at)
            if owners.isEmpty {
                tables.owners[number] = nil
                tables.names[number] = nil
            } else {
                tables.owners[number] = owners
                if at == 0 { tables.names[number] = tables.contacts[owners[0]]?.name }
            }
        }
        return true
    }
}
