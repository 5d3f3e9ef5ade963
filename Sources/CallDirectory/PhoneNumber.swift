import ScreenText
/// Phone handles read as numbers: for directories (country code and digits, an
/// `Int64`) and for matching handles with each other (the digits as written).
public enum PhoneNumber {
    /// A handle read as a phone number.
    public struct Parsed: Sendable, Hashable {
        /// ASCII digits as written, leading zeros kept (`0800…`, `0044…`).
        public let digits: String
        /// The extension's ASCII digits (`;ext=22`), "" when there is none.
        public let `extension`: String

        /// Compares handles: `+1 (408) 555-5555` and `14085555555` are one key,
        /// `0800 123` and `800 123` are two, and an extension is part of it.
        public var key: String { `extension`.isEmpty ? digits : digits + ";ext=" + `extension` }
    }

    /// `+1 (408) 555-5555`, `tel:+14085555555;ext=22` and `１４０８５５５５５５５` → 14085555555.
    /// Directory numbers are a country code and digits: a handle whose digits start
    /// with 0 (a national number, or one dialled through an access code such as
    /// `0044…`) has no country code and is no directory number (nil); the zeros are
    /// not dropped to make it look like one. The extension is dropped: a number's
    /// entry covers its extensions. Anything `parse` refuses, or a number outside
    /// 1 … 2^63−2 → nil.
    public static func normalize(_ handle: String) -> Int64? {
        guard let digits = parse(handle)?.digits.utf8, digits.first != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit &- 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return DirectoryLimits.numberRange.contains(value) ? value : nil
    }

    /// The handle's matching key (see `Parsed.key`); nil when it is no phone number.
    public static func key(_ handle: String) -> String? { parse(handle)?.key }

    /// Reads a phone handle: an optional `tel:` scheme, one leading `+`, digits of
    /// any script (`١٢٣`, full-width `１２３`), separators (spaces of any width,
    /// dashes and hyphens of any kind, `. ( ) /` and their full-width forms,
    /// invisible format characters such as a zero-width space or a direction
    /// mark), then parameters after `;` of which only `ext=` is kept. Letters,
    /// other characters, a second `+`, a bad extension or no digits → nil.
    public static func parse(_ handle: String) -> Parsed? {
        var text = Substring(handle)
        while let first = text.unicodeScalars.first, first.properties.isWhitespace { text = text.dropFirst() }
        if text.prefix(4).lowercased() == "tel:" { text = text.dropFirst(4) }
        var parameters: Substring = ""
        if let semicolon = text.firstIndex(of: ";") {
            parameters = text[text.index(after: semicolon)...]
            text = text[..<semicolon]
        }
        guard let digits = digits(text)?.digits, !digits.isEmpty else { return nil }
        var ext = ""
        for parameter in parameters.split(separator: ";") {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].trimmingWhitespace().lowercased() == "ext" else { continue }
            guard ext.isEmpty, let written = Self.digits(parts[1]), !written.digits.isEmpty, !written.plus else { return nil }
            ext = written.digits
        }
        return Parsed(digits: digits, extension: ext)
    }

    /// The digits of `text` in ASCII, separators skipped, and whether one `+`
    /// came before them; nil at anything else.
    private static func digits(_ text: Substring) -> (digits: String, plus: Bool)? {
        var out: [UInt8] = []
        var plus = false
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                switch UInt8(scalar.value) {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): out.append(UInt8(scalar.value))
                case UInt8(ascii: "+"):
                    guard out.isEmpty, !plus else { return nil }
                    plus = true
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "-"), UInt8(ascii: "."),
                     UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"):
                    continue
                default: return nil
                }
            } else if scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue,
                      value >= 0, value <= 9 {
                out.append(UInt8(ascii: "0") + UInt8(value))
            } else if plusSigns.contains(scalar) {
                guard out.isEmpty, !plus else { return nil }
                plus = true
            } else if !isSeparator(scalar) {
                return nil
            }
        }
        return (String(decoding: out, as: UTF8.self), plus)
    }

    /// Full-width and small plus signs.
    private static let plusSigns: Set<Unicode.Scalar> = ["\u{FF0B}", "\u{FE62}"]
    /// Full-width and other forms of `. ( ) /`, and the minus sign.
    private static let otherSeparators: Set<Unicode.Scalar> = [
        "\u{FF0E}", "\u{FF08}", "\u{FF09}", "\u{FF0F}", "\u{FE59}", "\u{FE5A}", "\u{2212}", "\u{2024}", "\u{00B7}",
    ]

    /// What people and programs put between digits without meaning anything:
    /// any space, any dash, invisible format characters (a formatting trick must
    /// not dodge a block), and the forms above.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\t" || otherSeparators.contains(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .dashPunctuation, .format, .spaceSeparator: return true
        default: return false
        }
    }
}

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
        let number = PhoneNumber.parse(handle)
        return parsed.contains { $0.matches(handle: handle, number: number) }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(patterns: [String](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try patterns.encode(to: encoder)
    }
}

