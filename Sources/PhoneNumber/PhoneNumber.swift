/// Phone handles read as numbers: for directories (country code and digits, an
/// `Int64`) and for matching handles with each other (the digits as written).
/// A module of its own, with no dependencies: the call directory, the address book and the
/// service's screening all read numbers through it.
public enum PhoneNumber {
    /// Directory numbers are 1 … 2^63−2 (country code and digits).
    public static let numberRange: ClosedRange<Int64> = 1...(Int64.max - 1)

    /// A handle read as a phone number.
    public struct Parsed: Sendable, Hashable {
        /// ASCII digits as written, leading zeros kept (`0800…`, `0044…`).
        public let digits: String
        /// The extension's ASCII digits (`;ext=22`), "" when there is none.
        public let `extension`: String

        /// Compares handles: `+1 (408) 555-5555` and `14085555555` are one key,
        /// `0800 123` and `800 123` are two, and an extension is part of it.
        public var key: String { `extension`.isEmpty ? digits : digits + ";ext=" + `extension` }

        /// The directory number (see `normalize`).
        public var number: Int64? { PhoneNumber.number(digits: Substring(digits)) }
    }

    /// `+1 (408) 555-5555`, `tel:+14085555555;ext=22` and `１４０８５５５５５５５` → 14085555555.
    /// Directory numbers are a country code and digits: a handle whose digits start
    /// with 0 (a national number, or one dialled through an access code such as
    /// `0044…`) has no country code and is no directory number (nil); the zeros are
    /// not dropped to make it look like one. The extension is dropped: a number's
    /// entry covers its extensions. Anything `parse` refuses, or a number outside
    /// 1 … 2^63−2 → nil.
    public static func normalize(_ handle: String) -> Int64? {
        parse(handle)?.number
    }

    /// ASCII digits, a country code first, as a directory number (see `normalize`).
    /// A Substring, not `some StringProtocol`: a generic function is not specialized for callers in
    /// other modules (the address book's), where each digit cost a witness call, 4,500 instructions a
    /// number (callgrind, 2026-11-28).
    public static func number(digits: Substring) -> Int64? {
        guard digits.utf8.first != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for digit in digits.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit &- 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return numberRange.contains(value) ? value : nil
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
        // Nearly every handle is ASCII: read as bytes, with the same rules (a fifth of the
        // instructions of an Identify went to reading the handle as Characters, five times).
        let ascii: Parsed?? = handle.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { $0 < 0x80 } ? .some(parseASCII(bytes)) : .none
        } ?? nil
        return ascii ?? parseUnicode(handle)
    }

    /// `parse` for any handle: its scalars and Characters.
    static func parseUnicode(_ handle: String) -> Parsed? {
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
            guard parts.count == 2, isExtensionName(parts[0]) else { continue }
            guard ext.isEmpty, let written = Self.digits(parts[1]), !written.digits.isEmpty, !written.plus else { return nil }
            ext = written.digits
        }
        return Parsed(digits: digits, extension: ext)
    }

    /// `parse` for an ASCII handle, read byte by byte: what `parseUnicode` does, where every
    /// Character is one byte (ASCII whitespace is 9-13 and the space).
    static func parseASCII(_ handle: UnsafeBufferPointer<UInt8>) -> Parsed? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || (9...13).contains(byte) }
        func lowercased(_ byte: UInt8) -> UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte }
        var start = handle.startIndex
        while start < handle.endIndex, isSpace(handle[start]) { start += 1 }
        if handle.endIndex - start >= 4, zip(handle[start..<start + 4], "tel:".utf8).allSatisfy({ lowercased($0) == $1 }) { start += 4 }
        let end = handle[start...].firstIndex(of: UInt8(ascii: ";")) ?? handle.endIndex
        guard let digits = asciiDigits(handle[start..<end]), !digits.digits.isEmpty else { return nil }
        var ext = ""
        for parameter in handle[min(end + 1, handle.endIndex)...].split(separator: UInt8(ascii: ";")) {
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = parameter[..<equals].drop(while: isSpace).reversed().drop(while: isSpace)
            guard name.count == 3, zip(name.reversed(), "ext".utf8).allSatisfy({ lowercased($0) == $1 }) else { continue }
            guard ext.isEmpty, let written = asciiDigits(parameter[(equals + 1)...]), !written.digits.isEmpty, !written.plus else { return nil }
            ext = written.digits
        }
        return Parsed(digits: digits.digits, extension: ext)
    }

    /// `digits` of ASCII bytes.
    private static func asciiDigits(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> (digits: String, plus: Bool)? {
        var plus = false, count = 0
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): count += 1
            case UInt8(ascii: "+"):
                guard count == 0, !plus else { return nil }
                plus = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"):
                continue
            default: return nil
            }
        }
        let digits = String(unsafeUninitializedCapacity: count) { buffer in
            var next = 0
            for byte in text where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                buffer[next] = byte
                next += 1
            }
            return next
        }
        return (digits, plus)
    }

    /// `ext`, in any case, with whitespace around it.
    private static func isExtensionName(_ name: Substring) -> Bool {
        guard let first = name.firstIndex(where: { !$0.isWhitespace }), let last = name.lastIndex(where: { !$0.isWhitespace }) else {
            return false
        }
        return name[first...last].lowercased() == "ext"
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
