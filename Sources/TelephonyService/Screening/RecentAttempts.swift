/// When each handle last called, within a time window and up to a number of
/// handles: for Do Not Disturb's repeated-call exception. A queue in arrival
/// order lets the oldest go in constant time (a flood of distinct callers used
/// to make every call filter the whole table).
struct RecentAttempts {
    let window: UInt64
    let capacity: Int
    private var latest: [String: UInt64] = [:]
    private var arrivals: [(key: String, time: UInt64)] = []
    /// Where the queue starts in `arrivals`; the array is compacted now and then.
    private var head = 0

    init(window: UInt64, capacity: Int) {
        self.window = window
        self.capacity = capacity
    }

    var count: Int { latest.count }

    /// When `key` last called within the window, before this attempt; records this one.
    mutating func record(_ key: String, at now: UInt64) -> UInt64? {
        forget(before: now)
        let previous = latest[key].flatMap { now &- $0 < window ? $0 : nil }
        latest[key] = now
        arrivals.append((key, now))
        while latest.count > capacity { dropOldest() }
        return previous
    }

    private mutating func forget(before now: UInt64) {
        while head < arrivals.count, now &- arrivals[head].time >= window { dropOldest() }
    }

    private mutating func dropOldest() {
        let oldest = arrivals[head]
        head += 1
        // A handle that called again since is kept, with its later time.
        if latest[oldest.key] == oldest.time { latest[oldest.key] = nil }
        if head > 1024 && head * 2 > arrivals.count {
            arrivals.removeFirst(head)
            head = 0
        }
    }
}
