/// Phone handles as directory numbers: country code and digits.
public enum PhoneNumber {
    /// `+1 (408) 555-5555`, `tel:+14085555555` and `14085555555` → 14085555555.
    /// A `tel:` scheme and its parameters (`;ext=22`) are dropped, then spaces
    /// and the visual separators `- . ( ) /`, and one leading `+`. Letters,
    /// other characters, nothing left, or a number outside 1 … 2^63−2 → nil.
    public static func normalize(_ handle: String) -> Int64? {
        guard let digits = digits(handle), !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit &- 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return DirectoryLimits.numberRange.contains(value) ? value : nil
    }

    /// The handle's ASCII digits after removing the scheme, parameters and
    /// separators; nil if it has anything else.
    static func digits(_ handle: String) -> [UInt8]? {
        var text = Substring(handle)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        if text.prefix(4).lowercased() == "tel:" { text = text.dropFirst(4) }
        if let semicolon = text.firstIndex(of: ";") { text = text[..<semicolon] }
        var out: [UInt8] = []
        var sawDigit = false
        var sawPlus = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(byte)
                sawDigit = true
            case UInt8(ascii: "+"):
                guard !sawDigit, !sawPlus else { return nil }
                sawPlus = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"), 0xC2, 0xA0:
                // 0xC2 0xA0 is a no-break space.
                continue
            default:
                return nil
            }
        }
        return out
    }
}

/// The user's own block list: patterns that are a handle (`alice@example.org`,
/// `+1 408 555 5555`) or a phone-number prefix ending in `*` (`+44*`).
public struct BlockList: Sendable, Hashable, Codable {
    public enum Pattern: Sendable, Hashable {
        /// A phone number, compared after normalisation.
        case number(Int64)
        /// Any other handle, compared without regard to letter case.
        case handle(String)
        /// Phone numbers whose digits start with these.
        case prefix(String)

        /// `invalidArguments` for an empty or too long pattern, or a `*` pattern
        /// whose beginning is not the start of a phone number.
        public init(_ text: String) throws(DirectoryError) {
            // Measured before any work on the text: a pattern may be as long as a D-Bus message.
            guard text.utf8.count <= DirectoryLimits.maximumPatternBytes else {
                throw .invalidArguments("A block list pattern is at most \(DirectoryLimits.maximumPatternBytes) bytes long, not \(text.utf8.count).")
            }
            let trimmed = text.trimmingWhitespace
            guard !trimmed.isEmpty else { throw .invalidArguments("A block list pattern must not be empty.") }
            // A number with a * anywhere but at the end ('+1*5') would be stored as a literal handle
            // that never matches a call. (A * in another handle, a SIP address, is kept as written.)
            if let star = trimmed.firstIndex(of: "*"), star != trimmed.index(before: trimmed.endIndex),
               trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || "+*-.() ".contains($0)) }) {
                throw .invalidArguments("'\(text.prefix(64))' has a * before its end: a prefix ends in *, such as +44*; other * are not wildcards.")
            }
            if trimmed.hasSuffix("*") {
                guard let digits = PhoneNumber.digits(String(trimmed.dropLast())), !digits.isEmpty else {
                    throw .invalidArguments("'\(text.prefix(64))' is not a phone-number prefix: a prefix is digits ending in *, such as +44*.")
                }
                self = .prefix(String(decoding: digits, as: UTF8.self))
            } else if let number = PhoneNumber.normalize(trimmed) {
                self = .number(number)
            } else {
                self = .handle(trimmed.lowercased())
            }
        }

        public func matches(handle: String, number: Int64?) -> Bool {
            switch self {
            case .number(let blocked): number == blocked
            case .handle(let blocked): handle.trimmingWhitespace.lowercased() == blocked
            case .prefix(let digits): number.map { String($0).hasPrefix(digits) } ?? false
            }
        }
    }

    /// The patterns as the user wrote them, in the order added.
    public private(set) var patterns: [String] = []
    private var parsed: [Pattern] = []
    /// The same patterns as `parsed`, to find one without a scan.
    private var known: Set<Pattern> = []

    public init() {}

    public init(patterns: [String]) throws(DirectoryError) {
        for pattern in patterns { try add(pattern) }
    }

    /// False if an equal pattern is already there; `invalidArguments` when the list is full.
    @discardableResult
    public mutating func add(_ pattern: String) throws(DirectoryError) -> Bool {
        let parsedPattern = try Pattern(pattern)
        guard !known.contains(parsedPattern) else { return false }
        guard parsed.count < DirectoryLimits.maximumBlockListPatterns else {
            throw .invalidArguments("The block list is full: it holds at most \(DirectoryLimits.maximumBlockListPatterns) patterns.")
        }
        patterns.append(pattern.trimmingWhitespace)
        parsed.append(parsedPattern)
        known.insert(parsedPattern)
        return true
    }

    /// Removes the pattern equal to this one (`+1 408 555 5555` removes `14085555555`). False if none.
    @discardableResult
    public mutating func remove(_ pattern: String) -> Bool {
        guard let parsedPattern = try? Pattern(pattern), known.remove(parsedPattern) != nil, let index = parsed.firstIndex(of: parsedPattern) else { return false }
        patterns.remove(at: index)
        parsed.remove(at: index)
        return true
    }

    public func matches(handle: String) -> Bool {
        let number = PhoneNumber.normalize(handle)
        return parsed.contains { $0.matches(handle: handle, number: number) }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(patterns: [String](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try patterns.encode(to: encoder)
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
