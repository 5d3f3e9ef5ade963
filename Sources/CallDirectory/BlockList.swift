import PhoneNumber
import ScreenText

/// The user's own block list: patterns that are a handle (`alice@example.org`,
/// `+1 408 555 5555`) or a phone-number prefix ending in `*` (`+44*`).
public struct BlockList: Sendable, Hashable, Codable {
    public enum Pattern: Sendable, Hashable {
        /// A phone number, compared by its digits as written (`PhoneNumber.Parsed`);
        /// with `extension` "" it covers the number's extensions too.
        case number(digits: String, extension: String)
        /// Any other handle, compared without regard to letter case.
        case handle(String)
        /// Phone numbers whose digits, as written, start with these (`0044*` ≠ `+44*`).
        case prefix(String)

        /// `invalidArguments` for an empty or too long pattern, or a `*` pattern
        /// whose beginning is not the start of a phone number.
        public init(_ text: String) throws(DirectoryError) {
            // Measured before any work on the text: a pattern may be as long as a D-Bus message.
            guard text.utf8.count <= DirectoryLimits.maximumPatternBytes else {
                throw .invalidArguments("A block list pattern is at most \(DirectoryLimits.maximumPatternBytes) bytes long, not \(text.utf8.count).")
            }
            let trimmed = text.trimmingWhitespace()
            guard !trimmed.isEmpty else { throw .invalidArguments("A block list pattern must not be empty.") }
            // A number with a * anywhere but at the end ('+1*5') would be stored as a literal handle
            // that never matches a call. (A * in another handle, a SIP address, is kept as written.)
            if let star = trimmed.firstIndex(of: "*"), star != trimmed.index(before: trimmed.endIndex),
               trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || "+*-.() ".contains($0)) }) {
                throw .invalidArguments("'\(text.prefix(64))' has a * before its end: a prefix ends in *, such as +44*; other * are not wildcards.")
            }
            if trimmed.hasSuffix("*") {
                guard let number = PhoneNumber.parse(String(trimmed.dropLast())), number.extension.isEmpty else {
                    throw .invalidArguments("'\(text.prefix(64))' is not a phone-number prefix: a prefix is digits ending in *, such as +44*.")
                }
                self = .prefix(number.digits)
            } else if let number = PhoneNumber.parse(trimmed) {
                self = .number(digits: number.digits, extension: number.extension)
            } else {
                self = .handle(trimmed.lowercased())
            }
        }

        /// `number`: the handle read as a phone number, if it is one.
        public func matches(handle: String, number: PhoneNumber.Parsed?) -> Bool {
            switch self {
            case .number(let digits, let ext):
                number.map { $0.digits == digits && (ext.isEmpty || $0.extension == ext) } ?? false
            case .handle(let blocked): handle.trimmingWhitespace().lowercased() == blocked
            case .prefix(let digits): number.map { $0.digits.hasPrefix(digits) } ?? false
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
        patterns.append(pattern.trimmingWhitespace())
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
        matches(handle: handle, number: PhoneNumber.parse(handle))
    }

    /// `matches(handle:)` for a handle already read (`number`: `PhoneNumber.parse(handle)`).
    public func matches(handle: String, number: PhoneNumber.Parsed?) -> Bool {
        parsed.contains { $0.matches(handle: handle, number: number) }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(patterns: [String](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try patterns.encode(to: encoder)
    }
}

