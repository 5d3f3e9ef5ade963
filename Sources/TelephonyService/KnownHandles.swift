/// Who has called or been called lately, for silencing unknown callers: the
/// `capacity` most recent distinct handles of Recents, kept in memory so that
/// screening an incoming call reads no disk. Bounded: a history of a million
/// calls, or a flood of distinct callers, costs at most `capacity` handles
/// (10,000: about a MB). A handle last seen before the `capacity` most recent
/// others counts as unknown, as on a phone whose Recents keeps the latest calls.
struct KnownHandles {
    /// Distinct handles kept.
    static let capacity = 10_000
    /// Rows of Recents read (newest first) to find them, at start and after a Delete or Clear.
    static let rowsScanned = 50_000

    let capacity: Int
    /// Each handle's latest touch.
    private var latest: [String: Int] = [:]
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

    var count: Int { latest.count }

    func contains(_ handle: String) -> Bool { latest[handle] != nil }

    /// The handle called or was called now.
    mutating func touch(_ handle: String) {
        clock += 1
        latest[handle] = clock
        touches.append((handle, clock))
        while latest.count > capacity { dropOldest() }
        // A few handles touched over and over leave stale touches behind.
        if touches.count - head > 2 * capacity + 1024 { compact() }
    }

    private mutating func dropOldest() {
        while head < touches.count {
            let oldest = touches[head]
            head += 1
            if latest[oldest.handle] == oldest.touch {
                latest[oldest.handle] = nil
                return
            }
        }
    }

    private mutating func compact() {
        touches = touches[head...].filter { latest[$0.handle] == $0.touch }
        head = 0
    }
}
