import AddressBook
import CGLib
import FoundationEssentials

/// Text as search compares it: names folded to lower case without accents, in words; numbers as
/// their digits.
public enum SearchText {
    /// Lower case, accents and width off, letters and digits only, words separated by one space:
    /// "Zoë  O'Brien-Smith" → "zoe obrien smith". Apostrophes join (O'Brien is one word); every
    /// other character that is neither a letter nor a digit separates words.
    public static func fold(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        func append(_ byte: UInt8) {
            if pendingSpace, !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(byte)
        }
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): append(byte + 32)
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): append(byte)
                case UInt8(ascii: "'"): break
                default: pendingSpace = true
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
        for scalar in folded(text).unicodeScalars {
            if let replacement = letters[scalar] {
                for byte in replacement.utf8 { append(byte) }
                continue
            }
            let properties = scalar.properties
            if scalar == "'" || scalar == "\u{2019}" || scalar == "\u{02BC}" { continue }
            // Accents are off; other marks (a script's vowel signs) belong to their letter.
            if isDiacritic(scalar) { continue }
            if properties.isAlphabetic || properties.numericType != nil || properties.generalCategory == .nonspacingMark
                || properties.generalCategory == .spacingMark {
                if let value = properties.numericType == .decimal ? properties.numericValue : nil, let digit = Int(exactly: value) {
                    append(UInt8(ascii: "0") + UInt8(digit))
                    continue
                }
                for byte in String(properties.lowercaseMapping).utf8 { append(byte) }
            } else {
                pendingSpace = true
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Case folded, then in compatibility decomposition (NFKD) by GLib, already in the daemon:
    /// "Ǻ" → "a" + ring + acute, "Ｆ" → "f", "ﬁ" → "fi". Foundation's `folding(options:)` would do it
    /// through ICU, 38 MB of data in every program (issue 44).
    private static func folded(_ text: String) -> String {
        guard let lower = g_utf8_casefold(text, -1) else { return text }
        defer { g_free(lower) }
        guard let decomposed = g_utf8_normalize(lower, -1, G_NORMALIZE_ALL) else { return String(cString: lower) }
        defer { g_free(decomposed) }
        return String(cString: decomposed)
    }

    /// The combining accents (the Unicode blocks of combining diacritical marks): what
    /// decomposition leaves of "é", "ễ", "й" beside their letter.
    private static func isDiacritic(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: true
        default: false
        }
    }

    /// Latin letters that folding keeps (they are letters of their own, not accented ones) but that
    /// a person types without: "Łukasz" is found by "lukasz".
    private static let letters: [Unicode.Scalar: String] = [
        "ł": "l", "ø": "o", "œ": "oe", "æ": "ae", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ß": "ss", "ħ": "h", "ŧ": "t", "ŋ": "n",
        "ǆ": "dz", "ǉ": "lj", "ǌ": "nj", "ĳ": "ij",
    ]

    /// The decimal digits of `text`, of any script, as ASCII.
    public static func digits(_ text: String) -> String {
        var out: [UInt8] = []
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                if ("0"..."9").contains(scalar) { out.append(UInt8(scalar.value)) }
            } else if let value = scalar.properties.numericType == .decimal ? scalar.properties.numericValue : nil, let digit = Int(exactly: value) {
                out.append(UInt8(ascii: "0") + UInt8(digit))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` is written as a phone number (or the start of one): digits, with only the
    /// characters numbers are written with (`+ ( ) - . / * #` and spaces), and at least one digit.
    public static func isNumber(_ text: String) -> Bool {
        var digits = 0
        for scalar in text.unicodeScalars {
            if let value = scalar.properties.numericType == .decimal ? scalar.properties.numericValue : nil, value >= 0 {
                digits += 1
            } else if !numberPunctuation.contains(scalar) {
                return false
            }
        }
        return digits > 0
    }

    private static let numberPunctuation: Set<Unicode.Scalar> = ["+", "(", ")", "-", ".", "/", "*", "#", " ", "\u{FF0B}", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{00A0}"]

    /// What a person sees of text a caller typed: control characters and bidi overrides out,
    /// runs of white space made one space, trimmed.
    public static func clean(_ text: String) -> String {
        var out = ""
        var space = false
        for scalar in text.unicodeScalars {
            let properties = scalar.properties
            if properties.isWhitespace || properties.generalCategory == .control || properties.generalCategory == .lineSeparator
                || properties.generalCategory == .paragraphSeparator {
                space = true
                continue
            }
            if properties.isBidiControl || properties.generalCategory == .format { continue }
            if space, !out.isEmpty { out.append(" ") }
            space = false
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}

/// What the user typed, read once for every kind of match.
public struct SearchQuery: Sendable, Equatable {
    /// As typed, cleaned (`SearchText.clean`).
    public let text: String
    /// The folded words: each must start a word of a name. Each once, and at most `maximumWords`.
    public let words: [String]
    /// Written as a phone number: its digits are matched against numbers.
    public let isNumber: Bool
    /// Its digits (ASCII), when `isNumber`.
    public let digits: String
    /// The international digits it starts with, when its country is known (`ContactNumbering.internationalPrefix`).
    public let international: String?
    /// Typed with `+` and its country: from a number's start, never from within one. (Not `00`:
    /// "0001" is as likely the end of a number as the start of an international one.)
    public let isInternational: Bool

    public init(_ text: String, numbering: ContactNumbering) {
        let clean = SearchText.clean(text)
        self.text = clean
        words = Self.distinctWords(SearchText.fold(clean))
        isNumber = SearchText.isNumber(clean)
        digits = isNumber ? SearchText.digits(clean) : ""
        international = isNumber ? numbering.internationalPrefix(clean) : nil
        isInternational = isNumber && (clean.hasPrefix("+") || clean.hasPrefix("\u{FF0B}"))
    }

    /// The shell's terms (what the user typed, split at white space) as one query.
    public init(terms: [String], numbering: ContactNumbering) {
        self.init(terms.joined(separator: " "), numbering: numbering)
    }

    /// The most words a query's names are matched with. Each word is one more scan of the names
    /// it could match: 1 KiB of one-letter words was 512 scans, 0.9-1.7 s of a debug build's CPU
    /// per query (issue 53). Nobody types more words of one name than this; a query that has more
    /// is matched by its first 16, which find a superset of what all of them would.
    public static let maximumWords = 16

    /// The words of folded text, each once (a word typed twice asks nothing more: each must start a
    /// word of the name), the first `maximumWords` of them.
    static func distinctWords(_ folded: String) -> [String] {
        var seen = Set<Substring>(), words: [String] = []
        for word in folded.split(separator: " ") where seen.insert(word).inserted {
            words.append(String(word))
            if words.count == maximumWords { break }
        }
        return words
    }

    /// Nothing to look for: every contact, for `AddressBook.Search`.
    public var isEmpty: Bool { words.isEmpty && digits.isEmpty }

    /// A number complete enough to call as typed ("Call +1 408 555 0142"): at least 3 digits.
    public var isCallableNumber: Bool { isNumber && digits.count >= 3 }

    /// The number to call as typed: its digits, with the `+` (and `*`, `#`) it has.
    public var dialString: String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "+" || scalar == "\u{FF0B}" {
                if out.isEmpty { out = "+" }
            } else if scalar == "*" || scalar == "#" {
                out.unicodeScalars.append(scalar)
            } else if let value = scalar.properties.numericType == .decimal ? scalar.properties.numericValue : nil, let digit = Int(exactly: value) {
                out += String(digit)
            }
        }
        return out
    }
}
