import PeopleSearch

/// Who has called or been called lately, for silencing unknown callers and for the system's
/// search: the `capacity` most recent distinct handles of Recents, with what the latest call
/// knew of each (its name, its app), kept in memory so that screening an incoming call or a
/// search reads no disk. Bounded: a history of a million calls, or a flood of distinct callers,
/// costs at most `capacity` handles (10,000: under 2 MB, names and apps included). A handle last seen before the
/// `capacity` most recent others counts as unknown, as on a phone whose Recents keeps the
/// latest calls.
struct KnownHandles: Sendable {
    /// Distinct handles kept.
    static let capacity = 10_000
    /// Rows of Recents read (newest first) to find them, at start and after a Delete or Clear.
    static let rowsScanned = 50_000

    let capacity: Int
    /// Each handle's latest touch, and who the latest call was with (nil: not known yet, a call
    /// still being recorded).
    private var latest: [String: (touch: Int, person: SearchPerson?)] = [:]
    /// Touches in order; a touch older than its handle's latest is stale.
    private var touches: [(handle: String, touch: Int)] = []
    /// Where the live part of `touches` starts; the array is compacted now and then.
    private var head = 0
    private var clock = 0

    /// `newestFirst`: handles as Recents lists them (duplicates allowed).
    init(capacity: Int = KnownHandles.capacity, newestFirst handles: [String] = []) {
        self.capacity = capacity
        for handle in handles.reversed() { touch(handle) }
    }

    /// `newestFirst`: who each call of Recents was with, newest first (duplicates allowed).
    init(capacity: Int = KnownHandles.capacity, newestFirst people: [SearchPerson]) {
        self.capacity = capacity
        for person in people.reversed() { touch(person.handle, person: person) }
    }

    var count: Int { latest.count }

    func contains(_ handle: String) -> Bool { latest[handle] != nil }

    /// The handle called or was called now; `person`: who it was (kept until a later call says otherwise).
    mutating func touch(_ handle: String, person: SearchPerson? = nil) {
        clock += 1
        latest[handle] = (clock, person ?? latest[handle]?.person)
        touches.append((handle, clock))
        while latest.count > capacity { dropOldest() }
        // A few handles touched over and over leave stale touches behind.
        if touches.count - head > 2 * capacity + 1024 { compact() }
    }

    /// Who the kept handles were with, newest first (those known: a call being recorded is not yet).
    func people() -> [SearchPerson] {
        latest.values.compactMap { entry in entry.person.map { (entry.touch, $0) } }.sorted { $0.0 > $1.0 }.map(\.1)
    }

    private mutating func dropOldest() {
        while head < touches.count {
            let oldest = touches[head]
            head += 1
            if latest[oldest.handle]?.touch == oldest.touch {
                latest[oldest.handle] = nil
                return
            }
        }
    }

    private mutating func compact() {
        touches = touches[head...].filter { latest[$0.handle]?.touch == $0.touch }
        head = 0
    }
}
