import FoundationEssentials
import ScreenText

/// What the address book needs of a vCard: its UID, the name to show and its phone numbers.
public struct VCard: Sendable, Hashable {
    public var uid: String?
    /// FN, else N put together, else ORG; nil when the card names no one.
    public var name: String?
    /// TEL values as written (`tel:` URIs without their scheme's parameters other than `ext`).
    public var telephones: [String]
    /// Each TEL's label from its types (`ContactPhone.label(types:)`), in the same order.
    public var telephoneLabels: [String] = []
}

/// A card that could not be read, with the file and line where it went wrong.
public struct VCardError: Error, Sendable, Hashable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let reason: String
    public var description: String { "\(file):\(line): \(reason)" }
}

/// Reads vCard 2.1, 3.0 and 4.0 (RFC 2426, RFC 6350): folded lines, groups (`item1.TEL`),
/// parameters, backslash escapes, `tel:` URIs, and quoted-printable values with their soft
/// line breaks (vCard 2.1, which phones still export). Only BEGIN/END, UID, FN, N, ORG and
/// TEL (with its types) are read; everything else is passed over unread. A damaged card is an error naming its
/// file and line; the other cards of the same file are still read.
public enum VCardParser {
    /// Every card in `data` (a file may hold several), and the errors of those that are damaged.
    public static func parse(_ data: Data, file: String) -> (cards: [VCard], errors: [VCardError]) {
        var cards: [VCard] = []
        var errors: [VCardError] = []
        // vCard 4.0 is UTF-8; older cards may say CHARSET=…: bytes that are not UTF-8 are read as Latin-1
        // rather than lose the card.
        let text = String(validating: data, as: UTF8.self) ?? latin1(data)
        let lines = unfold(text)
        var current: (card: VCard, start: Int)?
        var depth = 0
        for (number, line) in lines {
            guard let colon = line.firstIndex(of: ":") else {
                if line.trimmingWhitespace().isEmpty { continue }
                if current != nil {
                    errors.append(VCardError(file: file, line: number, reason: "a line without ':' inside a card"))
                    current = nil
                    depth = 0
                }
                continue
            }
            let head = line[..<colon]
            let value = String(line[line.index(after: colon)...])
            var parts = head.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            var name = parts.removeFirst()
            if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
            name = name.uppercased()
            let parameters = parts
            switch name {
            case "BEGIN" where value.trimmingWhitespace().uppercased() == "VCARD":
                if current == nil {
                    current = (VCard(uid: nil, name: nil, telephones: []), number)
                    depth = 1
                } else {
                    depth += 1 // An embedded card (vCard 2.1 AGENT): passed over.
                }
            case "END" where value.trimmingWhitespace().uppercased() == "VCARD":
                guard let open = current else {
                    errors.append(VCardError(file: file, line: number, reason: "END:VCARD without BEGIN:VCARD"))
                    continue
                }
                depth -= 1
                if depth == 0 {
                    cards.append(open.card)
                    current = nil
                }
            default:
                guard current != nil else {
                    errors.append(VCardError(file: file, line: number, reason: "'\(name.prefix(32))' outside BEGIN:VCARD … END:VCARD"))
                    continue
                }
                guard depth == 1 else { continue }
                let decoded = decode(value, parameters: parameters)
                switch name {
                case "UID": current!.card.uid = unescape(decoded)
                case "FN":
                    let fn = unescape(decoded).trimmingWhitespace()
                    if !fn.isEmpty { current!.card.name = fn }
                case "N" where current!.card.name == nil:
                    current!.card.name = nameFromN(decoded)
                case "ORG" where current!.card.name == nil:
                    let org = components(decoded).first.map { $0.trimmingWhitespace() } ?? ""
                    if !org.isEmpty { current!.card.name = org }
                case "TEL":
                    let tel = telephone(decoded)
                    if !tel.isEmpty {
                        current!.card.telephones.append(tel)
                        current!.card.telephoneLabels.append(ContactPhone.label(types: types(parameters)))
                    }
                default: break
                }
            }
        }
        if let open = current {
            errors.append(VCardError(file: file, line: open.start, reason: "BEGIN:VCARD without END:VCARD"))
        }
        return (cards, errors)
    }

    private static func latin1(_ data: Data) -> String {
        String(data.map { Character(Unicode.Scalar($0)) })
    }

    /// Logical lines with the number of their first physical line: a line starting with a
    /// space or tab continues the one before (RFC 6350 3.2); a quoted-printable value ending
    /// in `=` continues on the next line (vCard 2.1's soft line break).
    static func unfold(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var number = 0
        var softBreak = false
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            number += 1
            let line = String(raw)
            if softBreak, !result.isEmpty {
                result[result.count - 1].1.removeLast() // the '='
                result[result.count - 1].1 += line
            } else if let first = line.first, first == " " || first == "\t", !result.isEmpty {
                result[result.count - 1].1 += line.dropFirst()
            } else {
                result.append((number, line))
            }
            let joined = result.last?.1 ?? ""
            softBreak = joined.hasSuffix("=") && isQuotedPrintable(joined)
        }
        return result
    }

    private static func isQuotedPrintable(_ line: String) -> Bool {
        guard let colon = line.firstIndex(of: ":") else { return false }
        return line[..<colon].uppercased().contains("QUOTED-PRINTABLE")
    }

    /// The value with its transfer encoding undone (quoted-printable; base64 is only used for photos here).
    private static func decode(_ value: String, parameters: [String]) -> String {
        guard parameters.contains(where: { $0.uppercased().contains("QUOTED-PRINTABLE") }) else { return value }
        var bytes: [UInt8] = []
        var utf8 = Array(value.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "="), utf8.count >= 2,
               let high = ScreenText.hexValue(utf8[utf8.startIndex]), let low = ScreenText.hexValue(utf8[utf8.startIndex + 1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte) // A stray '=' is kept: tolerance, not a damaged card.
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
    }

    /// A property's types: `TYPE=CELL`, `type="voice,cell"`, `TYPE=HOME;TYPE=VOICE`, or vCard
    /// 2.1's bare `CELL`.
    static func types(_ parameters: [String]) -> [String] {
        var types: [String] = []
        for parameter in parameters {
            guard let equals = parameter.firstIndex(of: "=") else {
                types.append(parameter)
                continue
            }
            guard parameter[..<equals].trimmingWhitespace().uppercased() == "TYPE" else { continue }
            let value = parameter[parameter.index(after: equals)...].filter { $0 != "\"" }
            types += value.split(separator: ",").map(String.init)
        }
        return types
    }

    /// `\n`, `\,`, `\;`, `\\` undone.
    static func unescape<S: StringProtocol>(_ text: S) -> String {
        var out = ""
        var escaped = false
        for character in text {
            if escaped {
                out.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// A structured value's components, split at unescaped `;`, each unescaped.
    static func components(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for character in value {
            if escaped {
                current.append("\\")
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ";" {
                parts.append(unescape(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(unescape(current))
        return parts
    }

    /// N is family;given;additional;prefixes;suffixes → "prefixes given additional family suffixes".
    private static func nameFromN(_ value: String) -> String? {
        let n = components(value).map { $0.replacing(",", with: " ").trimmingWhitespace() }
        func at(_ index: Int) -> String { index < n.count ? n[index] : "" }
        let name = [at(3), at(1), at(2), at(0), at(4)].filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? nil : name
    }

    /// `tel:+1-408-555-5555;ext=22` → `+1-408-555-5555;ext=22`; text values unescaped.
    private static func telephone(_ value: String) -> String {
        let trimmed = unescape(value).trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("tel:") else { return trimmed }
        let uri = trimmed.dropFirst(4)
        let pieces = uri.split(separator: ";")
        guard let number = pieces.first else { return "" }
        let ext = pieces.dropFirst().first { $0.lowercased().hasPrefix("ext=") }
        return String(number) + (ext.map { ";" + $0 } ?? "")
    }
}
