/// Text that came from outside (a caller's name, a handle, a directory label, an app's name) made
/// safe to put on a screen or a terminal, and nothing more: names in any script stay as written.
///
/// - Line breaks, tabs and the other C0/C1 controls become a space (a newline in a caller name must
///   not fake a second line in a notification, an ESC must not recolour a terminal);
/// - bidi overrides and isolates (U+202A…U+202E, U+2066…U+2069) are dropped: they reorder what
///   follows them ("evil\u{202E}gnp.exe"). The plain direction marks (LRM, RLM, ALM) stay, since
///   right-to-left names need them and they cannot reorder other text.
///
/// Works per Unicode scalar, not per Character: a control fused with a combining mark into one
/// grapheme cluster is still a control.
public enum ScreenText {
    /// The longest start of `text` of at most `maximumBytes` bytes of UTF-8, cut between Unicode
    /// scalars (a character of 100,000 combining marks is cut too).
    public static func prefix(_ text: String, maximumBytes: Int) -> String {
        guard text.utf8.count > maximumBytes else { return text }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= maximumBytes else { break }
            kept.append(scalar)
        }
        return String(kept)
    }

    public static func clean(_ text: String) -> String {
        clean(text, keeping: nil)
    }

    /// Cleans a text composed of lines joined with "\n" by us (a notification body), keeping those
    /// line breaks. Clean each caller-supplied part with `clean(_:)` before joining them.
    public static func cleanKeepingLineBreaks(_ text: String) -> String {
        clean(text, keeping: "\n")
    }

    private static func clean(_ text: String, keeping kept: Unicode.Scalar?) -> String {
        let needsCleaning = { (scalar: Unicode.Scalar) in scalar != kept && (isControl(scalar) || isBidiControl(scalar)) }
        // Most text is already clean: return it as it is, without copying.
        guard text.unicodeScalars.contains(where: needsCleaning) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == kept || !needsCleaning(scalar) {
                scalars.append(scalar)
            } else if !isBidiControl(scalar) {
                scalars.append(" ")
            }
        }
        return String(scalars)
    }

    /// Escapes text for the markup subset of notification bodies (`&`, `<`, `>`, quotes), per scalar.
    public static func markupEscaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// C0 (including tab and newline), DEL, C1, and the Unicode line and paragraph separators.
    /// `%XX` escapes decoded (a link's text, a pasted `tel:` number); nil when an escape is bad
    /// or the bytes are not UTF-8.
    public static func percentDecoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of one hexadecimal digit (either case); nil for any other byte.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
