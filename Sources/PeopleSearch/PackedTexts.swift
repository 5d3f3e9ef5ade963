#if canImport(Glibc)
import Glibc
#endif

/// The texts of many entries in one buffer, searched 16 bytes at a time (`find`): a query over
/// 10,000 names is one pass over ~150 KB of contiguous bytes (tens of microseconds), where a loop
/// over 10,000 strings is a thousand times more work spread over the heap. Each entry starts with `start`
/// (0x01), which no text has; within an entry, marks (`word`, 0x20, before each word of a name;
/// `end`, 0x02, after a number's digits) let a pattern that begins with one match only at the
/// start of a word, and one that ends with `end` only a whole number.
struct PackedTexts: Sendable {
    static let start: UInt8 = 0x01
    static let end: UInt8 = 0x02
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
    /// entry order, once per entry, with the offset of its first occurrence, until `found`
    /// answers false.
    func entries(holding pattern: [UInt8], within: Range<Int>? = nil, _ found: (_ entry: Int, _ offset: Int) -> Bool) {
        guard !pattern.isEmpty, !bytes.isEmpty else { return }
        let bounds = within ?? 0..<bytes.count
        bytes.withUnsafeBufferPointer { haystack in
            pattern.withUnsafeBufferPointer { needle in
                guard let base = haystack.baseAddress else { return }
                var from = bounds.lowerBound
                while from < bounds.upperBound,
                      let offset = Self.find(needle, in: UnsafeRawPointer(base), from: from, to: bounds.upperBound) {
                    let entry = entry(at: offset)
                    guard found(entry, offset) else { return }
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
                Self.find(needle, in: UnsafeRawPointer(haystack.baseAddress!), from: range.lowerBound, to: range.upperBound) != nil
            }
        }
    }

    /// Whether the bytes at `offset` are `pattern`.
    func matches(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + pattern.count <= bytes.count else { return false }
        for index in pattern.indices where bytes[offset + index] != pattern[index] { return false }
        return true
    }

    /// Where `needle` first occurs in `haystack[from..<to]`. Sixteen places at a time: those where
    /// two of the needle's bytes both are (SIMD compares, one load for each: its last, and its
    /// first that is not a mark, which every entry or word has), then the whole needle at those
    /// only. glibc's `memmem` reads a byte at a time for such short needles: this is several
    /// times faster over a packed index.
    @inline(__always)
    static func find(_ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeRawPointer, from: Int, to end: Int) -> Int? {
        let count = needle.count
        guard count > 0, end - from >= count, let needleBase = needle.baseAddress else { return nil }
        // The last byte that is no mark, and the first (or, in digits, whose first ones every
        // number of a country shares, the one before the last).
        var tail = count - 1
        while tail > 0, needle[tail] <= word { tail -= 1 }
        var lead = 0
        while lead < tail, needle[lead] <= word { lead += 1 }
        if lead < tail - 1, needle[lead] >= UInt8(ascii: "0"), needle[lead] <= UInt8(ascii: "9") { lead = tail - 1 }
        // One letter after its mark (" a"): the pair is rarer than the letter.
        if lead == tail, tail > 0 { lead = tail - 1 }
        let leads = SIMD16<UInt8>(repeating: needle[lead]), lasts = SIMD16<UInt8>(repeating: needle[tail])
        let lastStart = end - count
        var index = from
        while index + 15 <= lastStart {
            let heads = haystack.loadUnaligned(fromByteOffset: index + lead, as: SIMD16<UInt8>.self)
            let tails = haystack.loadUnaligned(fromByteOffset: index + tail, as: SIMD16<UInt8>.self)
            let candidates = (heads .== leads) .& (tails .== lasts)
            if any(candidates) {
                for lane in 0..<16 where candidates[lane] && memcmp(haystack + index + lane, needleBase, count) == 0 {
                    return index + lane
                }
            }
            index += 16
        }
        while index <= lastStart {
            if haystack.load(fromByteOffset: index + lead, as: UInt8.self) == needle[lead], memcmp(haystack + index, needleBase, count) == 0 {
                return index
            }
            index += 1
        }
        return nil
    }
}

/// Names and numbers of entries, packed for `PackedTexts.find`, and how an entry matches a query.
struct MatchIndex: Sendable {
    /// Each entry's name: ` word word…`, folded.
    private(set) var names = PackedTexts()
    /// Each number: its digits, then `end`.
    private(set) var numbers = PackedTexts()
    /// The entry each number belongs to, and which of its numbers it is.
    private(set) var numberEntry: [UInt32] = []
    private(set) var numberIndex: [UInt8] = []

    var count: Int { names.count }

    /// Adds an entry with its folded name and the digits of its numbers (E.164's, from the
    /// country code; a handle's own digits when it is no phone number).
    mutating func append(foldedName: String, numbers entryNumbers: [String]) {
        var text: [UInt8] = []
        text.reserveCapacity(foldedName.utf8.count + 1)
        for word in foldedName.utf8.split(separator: PackedTexts.word) {
            text.append(PackedTexts.word)
            text.append(contentsOf: word)
        }
        let entry = UInt32(names.count)
        names.append(text)
        for (index, digits) in entryNumbers.prefix(Int(UInt8.max)).enumerated() where !digits.isEmpty {
            numbers.append(Array(digits.utf8) + [PackedTexts.end])
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
    /// quality. Entries are in the order results are listed (by name, or newest first), so the
    /// first `limit` of a quality are its best: each scan stops once what it can still find would
    /// not be listed, and a query that matches every entry ("a", "+44") costs no more than one
    /// that matches a few.
    func hits(_ query: SearchQuery, limit: Int) -> [Hit] {
        var found = Matches(limit: limit)
        nameHits(query.words, &found)
        if query.isNumber { numberHits(query, &found) }
        let buckets = found.buckets
        // Each bucket in entry order; an entry once, at its best quality (its name before its number).
        var seen = Set<Int>()
        var result: [Hit] = []
        for bucket in buckets {
            let ordered = bucket.enumerated().sorted { ($0.element.entry, $0.offset) < ($1.element.entry, $1.offset) }.map(\.element)
            for hit in ordered where seen.insert(hit.entry).inserted { result.append(hit) }
        }
        return result
    }

    /// What the scans found, by quality.
    struct Matches {
        let limit: Int
        var buckets: [[Hit]] = [[], [], []]

        mutating func add(_ hit: Hit) {
            if !isFull(hit.quality) { buckets[hit.quality.rawValue].append(hit) }
        }

        func isFull(_ quality: Quality) -> Bool { buckets[quality.rawValue].count >= limit }

        /// Enough better matches that no `within` one would be listed.
        var hasEnoughBetter: Bool { buckets[0].count + buckets[1].count >= limit }
    }

    /// Every term starts a word of the name (in any order): the whole name first (its own scan,
    /// which finds few), then the rarest term's entries; once enough match anywhere, only names
    /// that start with the first term can still do better, and a scan of those ends it.
    private func nameHits(_ words: [String], _ found: inout Matches) {
        guard !words.isEmpty else { return }
        let patterns = words.map { [PackedTexts.word] + Array($0.utf8) }
        let whole = [PackedTexts.start] + patterns.flatMap { $0 }
        let first = [PackedTexts.start] + patterns[0]
        // The whole name: followed by the next entry's start (or the end of them all).
        names.entries(holding: whole + [PackedTexts.start]) { entry, _ in
            found.add(Hit(entry: entry, quality: .exact, number: nil))
            return !found.isFull(.exact)
        }
        let last = names.count - 1
        if last >= 0, names.range(of: last).count == whole.count, names.matches(whole, at: names.range(of: last).lowerBound) {
            found.add(Hit(entry: last, quality: .exact, number: nil))
        }
        func check(_ entry: Int, skipping skipped: Int, _ found: inout Matches) {
            let range = names.range(of: entry)
            for (index, pattern) in patterns.enumerated() where index != skipped {
                guard names.holds(pattern, in: range) else { return }
            }
            let starts = names.matches(first, at: range.lowerBound)
            // The exact ones are in already.
            if starts, whole.count == range.count, names.matches(whole, at: range.lowerBound) { return }
            found.add(Hit(entry: entry, quality: starts ? .start : .within, number: nil))
        }
        let lead = rarest(patterns)
        var stoppedAt: Int?
        var done = false
        names.entries(holding: patterns[lead]) { entry, _ in
            check(entry, skipping: lead, &found)
            if found.hasEnoughBetter { done = true } else if found.isFull(.within) { stoppedAt = entry }
            return !done && stoppedAt == nil
        }
        guard !done, let stoppedAt, stoppedAt + 1 < names.count else { return }
        names.entries(holding: first, within: names.range(of: stoppedAt + 1).lowerBound..<names.bytes.count) { entry, _ in
            check(entry, skipping: 0, &found)
            return !found.hasEnoughBetter
        }
    }

    /// The pattern of the fewest entries, as far as the first 32 KiB of names tell (the longest of
    /// equals): "caller 33" is found through " 33", not through the thousands of " caller".
    private func rarest(_ patterns: [[UInt8]]) -> Int {
        guard patterns.count > 1 else { return 0 }
        let sample = 0..<min(names.bytes.count, 32 * 1024)
        var best = 0, bestCount = Int.max
        for (index, pattern) in patterns.enumerated() {
            var count = 0
            names.entries(holding: pattern, within: sample) { _, _ in
                count += 1
                return count < bestCount
            }
            if count < bestCount || (count == bestCount && pattern.count > patterns[best].count) { (best, bestCount) = (index, count) }
        }
        return best
    }

    /// The digits are a whole number, start one (in E.164, from the country code: typed with `+`
    /// or `00`, nationally with the trunk prefix, or with the country code alone), or lie within
    /// one (only for digits typed without their country: "7946 0001").
    private func numberHits(_ query: SearchQuery, _ found: inout Matches) {
        let digits = Array(query.digits.utf8)
        guard !digits.isEmpty else { return }
        func starting(_ prefix: [UInt8]) {
            let pattern = [PackedTexts.start] + prefix
            numbers.entries(holding: pattern) { number, offset in
                let whole = numbers.bytes[offset + pattern.count] == PackedTexts.end
                found.add(Hit(entry: Int(numberEntry[number]), quality: whole ? .exact : .start, number: Int(numberIndex[number])))
                return !found.hasEnoughBetter
            }
        }
        let international = query.international.map { Array($0.utf8) } ?? []
        if !international.isEmpty { starting(international) }
        // "44 20 7946": the country code without its +. Never a national number's 0.
        if international != digits, !query.isInternational, digits.first != UInt8(ascii: "0"), !found.hasEnoughBetter { starting(digits) }
        // Digits from within a number ("7946 0001"): three at least, or every number would match;
        // not for a number typed with its country, which is typed from its start.
        guard digits.count >= 3, !query.isInternational, !found.hasEnoughBetter else { return }
        numbers.entries(holding: digits) { number, _ in
            found.add(Hit(entry: Int(numberEntry[number]), quality: .within, number: Int(numberIndex[number])))
            return !found.isFull(.within) && !found.hasEnoughBetter
        }
    }
}
