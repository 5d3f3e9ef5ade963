import CMemmem

/// The texts of many entries in one buffer, searched with `memmem`: a query over 10,000 names is
/// one pass over ~150 KB of contiguous bytes (tens of microseconds), where a loop over 10,000
/// strings is a thousand times more work spread over the heap. Each entry starts with `start`
/// (0x01), which no text has; within an entry, marks (`word`, 0x20, before each word of a name;
/// `written`, 0x02, between a number's two forms) let a pattern that begins with one match only
/// at the start of a word.
struct PackedTexts: Sendable {
    static let start: UInt8 = 0x01
    static let written: UInt8 = 0x02
    static let word: UInt8 = 0x20

    private(set) var bytes: [UInt8] = []
    /// Where each entry's `start` is.
    private(set) var starts: [UInt32] = []

    var count: Int { starts.count }

    /// Adds an entry: `start`, then `text` (which must hold no 0x01).
    mutating func append(_ text: some Sequence<UInt8>) {
        starts.append(UInt32(bytes.count))
        bytes.append(Self.start)
        bytes.append(contentsOf: text)
    }

    /// Entry `index`'s bytes, its `start` included.
    func range(of index: Int) -> Range<Int> {
        Int(starts[index])..<(index + 1 < starts.count ? Int(starts[index + 1]) : bytes.count)
    }

    /// The entry whose bytes hold `offset`.
    func entry(at offset: Int) -> Int {
        var low = 0, high = starts.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(starts[middle]) <= offset { low = middle } else { high = middle }
        }
        return low
    }

    /// Calls `found` with each entry that holds `pattern` in `within` (all entries when nil), in
    /// entry order, once per entry, with the offset of its first occurrence.
    func entries(holding pattern: [UInt8], within: Range<Int>? = nil, _ found: (_ entry: Int, _ offset: Int) -> Void) {
        guard !pattern.isEmpty, !bytes.isEmpty else { return }
        let bounds = within ?? 0..<bytes.count
        bytes.withUnsafeBufferPointer { haystack in
            pattern.withUnsafeBufferPointer { needle in
                guard let base = haystack.baseAddress, let needleBase = needle.baseAddress else { return }
                var from = bounds.lowerBound
                while from < bounds.upperBound,
                      let hit = memmem(base + from, bounds.upperBound - from, needleBase, needle.count) {
                    let offset = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    let entry = entry(at: offset)
                    found(entry, offset)
                    from = range(of: entry).upperBound // The next entry: one call per entry.
                }
            }
        }
    }

    /// Whether `pattern` occurs in `range`.
    func holds(_ pattern: [UInt8], in range: Range<Int>) -> Bool {
        guard pattern.count <= range.count else { return false }
        return bytes.withUnsafeBufferPointer { haystack in
            pattern.withUnsafeBufferPointer { needle in
                memmem(haystack.baseAddress! + range.lowerBound, range.count, needle.baseAddress!, needle.count) != nil
            }
        }
    }

    /// Whether the bytes at `offset` are `pattern`.
    func matches(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + pattern.count <= bytes.count else { return false }
        for index in pattern.indices where bytes[offset + index] != pattern[index] { return false }
        return true
    }
}

/// Names and numbers of entries, laid out for `memmem`, and how an entry matches a query.
struct MatchIndex: Sendable {
    /// Each entry's name: ` word word…`, folded.
    private(set) var names = PackedTexts()
    /// Each number: its E.164 digits (or nothing), `written`, the digits as written.
    private(set) var numbers = PackedTexts()
    /// The entry each number belongs to, and which of its numbers it is.
    private(set) var numberEntry: [UInt32] = []
    private(set) var numberIndex: [UInt8] = []

    var count: Int { names.count }

    /// Adds an entry with its folded name and its numbers (E.164 digits, or "" when it has
    /// none; and the digits as written).
    mutating func append(foldedName: String, numbers entryNumbers: [(e164: String, written: String)]) {
        var text: [UInt8] = []
        text.reserveCapacity(foldedName.utf8.count + 1)
        for word in foldedName.utf8.split(separator: PackedTexts.word) {
            text.append(PackedTexts.word)
            text.append(contentsOf: word)
        }
        let entry = UInt32(names.count)
        names.append(text)
        for (index, number) in entryNumbers.prefix(Int(UInt8.max)).enumerated() {
            numbers.append(Array(number.e164.utf8) + [PackedTexts.written] + Array(number.written.utf8))
            numberEntry.append(entry)
            numberIndex.append(UInt8(index))
        }
    }

    /// How well a match fits: lower is better.
    enum Quality: Int, Comparable, Sendable {
        /// The whole name, or the whole number.
        case exact = 0
        /// The name's first word starts with the first term, or the number starts with it.
        case start = 1
        /// Any word starts with each term, or the number holds the digits.
        case within = 2

        static func < (a: Quality, b: Quality) -> Bool { a.rawValue < b.rawValue }
    }

    /// An entry that matched: how well, and by which of its numbers (nil: by its name).
    struct Hit: Sendable {
        var entry: Int
        var quality: Quality
        var number: Int?
    }

    /// The entries that match `query`, best first, then in entry order; at most `limit` of each
    /// quality, so that a query that matches every entry costs one pass and no sort of them all.
    func hits(_ query: SearchQuery, limit: Int) -> [Hit] {
        var buckets: [[Hit]] = [[], [], []]
        func add(_ hit: Hit) {
            if buckets[hit.quality.rawValue].count < limit { buckets[hit.quality.rawValue].append(hit) }
        }
        nameHits(query.words, add)
        if query.isNumber { numberHits(query, add) }
        // Each bucket in entry order; an entry once, at its best quality (its name before its number).
        var seen = Set<Int>()
        var result: [Hit] = []
        for bucket in buckets {
            let ordered = bucket.enumerated().sorted { ($0.element.entry, $0.offset) < ($1.element.entry, $1.offset) }.map(\.element)
            for hit in ordered where seen.insert(hit.entry).inserted { result.append(hit) }
        }
        return result
    }

    /// Every term starts a word of the name (in any order).
    private func nameHits(_ words: [String], _ add: (Hit) -> Void) {
        guard !words.isEmpty else { return }
        let patterns = words.map { [PackedTexts.word] + Array($0.utf8) }
        // The longest term finds the fewest entries; the others are checked in each.
        let lead = patterns.indices.max { patterns[$0].count < patterns[$1].count }!
        let whole = [PackedTexts.start] + patterns.flatMap { $0 }
        let first = [PackedTexts.start] + patterns[0]
        names.entries(holding: patterns[lead]) { entry, _ in
            let range = names.range(of: entry)
            for (index, pattern) in patterns.enumerated() where index != lead {
                guard names.holds(pattern, in: range) else { return }
            }
            let quality: Quality
            if whole.count == range.count && names.matches(whole, at: range.lowerBound) {
                quality = .exact
            } else if names.matches(first, at: range.lowerBound) {
                quality = .start
            } else {
                quality = .within
            }
            add(Hit(entry: entry, quality: quality, number: nil))
        }
    }

    /// The digits start a number (in E.164, from the country code; or as written), or lie within one.
    private func numberHits(_ query: SearchQuery, _ add: (Hit) -> Void) {
        func hit(_ number: Int, _ quality: Quality) {
            add(Hit(entry: Int(numberEntry[number]), quality: quality, number: Int(numberIndex[number])))
        }
        var started = Set<Int>()
        if let international = query.international, !international.isEmpty {
            let pattern = [PackedTexts.start] + Array(international.utf8)
            numbers.entries(holding: pattern) { number, offset in
                started.insert(number)
                let end = offset + pattern.count
                hit(number, numbers.bytes[end] == PackedTexts.written ? .exact : .start)
            }
        }
        let digits = Array(query.digits.utf8)
        guard !digits.isEmpty else { return }
        let asWritten = [PackedTexts.written] + digits
        numbers.entries(holding: asWritten) { number, offset in
            guard !started.contains(number) else { return }
            started.insert(number)
            let range = numbers.range(of: number)
            hit(number, offset + asWritten.count == range.upperBound ? .exact : .start)
        }
        // Digits from within a number ("7946 0001"): three at least, or every number would match.
        guard digits.count >= 3 else { return }
        numbers.entries(holding: digits) { number, _ in
            guard !started.contains(number) else { return }
            hit(number, .within)
        }
    }
}
