import CIntl
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The user's language: every text MonkeyCall's programs show a person is looked up through the
/// system's gettext in one text domain, `monkeycall`, in the locale the program was started with
/// (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`, in gettext's order), and is English when no
/// catalog has it. D-Bus errors, log lines, JSON and the XML stay English: they never come here.
///
/// Message ids are English literals with positional placeholders (`%1$s`, `%2$s`, `%d` for a
/// plural's count) that translators may move, never Swift interpolation: `xgettext` (which has
/// no Swift parser, and reads the sources as C: `scripts/update-po`) sees only the literal.
/// The keywords it looks for: `tr`, `trn` (plural) and `trc` (with a context).
public enum Localization {
    public static let domain = "monkeycall"

    /// Where the catalogs are: `MONKEYCALL_LOCALE_DIR`, else `share/locale` beside the program's
    /// `bin` (an install under /usr, /usr/local or ~/.local), else /usr/share/locale.
    public static func catalogDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let given = environment["MONKEYCALL_LOCALE_DIR"], !given.isEmpty { return given }
        let program = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        let beside = program.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/locale").path
        return FileManager.default.fileExists(atPath: beside) ? beside : "/usr/share/locale"
    }

    /// Takes the locale from the environment and binds the catalogs; once, at a program's start,
    /// before any text is looked up. Numbers stay in the C locale: nothing MonkeyCall parses or
    /// writes (JSON, SQL, the bus) may change with the user's decimal separator.
    public static func setUp(catalogDirectory directory: String = catalogDirectory()) {
        setlocale(LC_ALL, "")
        setlocale(LC_NUMERIC, "C")
        bindtextdomain(domain, directory)
        bind_textdomain_codeset(domain, "UTF-8")
        translations.withLock { $0.removeAll() }
    }

    /// The columns `text` takes on a terminal: two for each wide (CJK) character, none for a
    /// combining mark; wcwidth(3) in the user's LC_CTYPE (one a character outside a UTF-8 locale).
    public static func terminalWidth(of text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            let columns = Int(wcwidth(wchar_t(bitPattern: scalar.value)))
            return width + (columns < 0 ? 1 : columns)
        }
    }

    /// `template` with `%1$s`, `%2$d`… (or `%s`, `%d`, in order) replaced by `arguments`, and `%%`
    /// by `%`. A placeholder with no argument is left as it is, never a crash: a
    /// catalog is data.
    public static func format(_ template: String, _ arguments: [String]) -> String {
        // Walked as UTF-8, not as Characters: every placeholder is ASCII, and Character by
        // Character a card's few texts cost 9,000 instructions each (3 % of a call's life, issue 55).
        // Cut only before or after an ASCII byte, each piece is whole UTF-8.
        let utf8 = Array(template.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return template }
        func text(_ range: Range<Int>) -> String { String(decoding: utf8[range], as: UTF8.self) }
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var result = ""
        var next = 0
        var literalStart = 0
        var index = 0
        while index < utf8.count {
            guard utf8[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            result += text(literalStart..<index)
            literalStart = index
            // An optional position, "1$", then the conversion.
            var conversion = index + 1
            var digitsEnd = conversion
            while digitsEnd < utf8.count, isDigit(utf8[digitsEnd]) { digitsEnd += 1 }
            var position: Int?
            if digitsEnd > conversion, digitsEnd < utf8.count, utf8[digitsEnd] == UInt8(ascii: "$"), let number = Int(text(conversion..<digitsEnd)) {
                position = number - 1
                conversion = digitsEnd + 1
            }
            // A lone "%" at the end stays as it is.
            guard conversion < utf8.count else { break }
            switch utf8[conversion] {
            case UInt8(ascii: "%"):
                result += "%"
            case UInt8(ascii: "s"), UInt8(ascii: "d"):
                let argument = position ?? next
                next = argument &+ 1  // a catalog's "%9223372036854775808$s" must not trap
                result += arguments.indices.contains(argument) ? arguments[argument] : text(index..<(conversion + 1))
            case let byte where byte >= 0x80:
                // Not a placeholder, and the start of a character of several bytes: read on from it.
                result += "%"
                index = conversion
                literalStart = index
                continue
            default:
                // Not a placeholder: kept as it is.
                result += text(index..<(conversion + 1))
            }
            index = conversion + 1
            literalStart = index
        }
        result += text(literalStart..<utf8.count)
        return result
    }
}

/// The translation of `message`, with `arguments` put in its placeholders.
public func tr(_ message: StaticString, _ arguments: String...) -> String {
    Localization.format(translation(of: message, in: nil), arguments)
}

/// The translation of `message` as meant in `context` ("button", "noun"): the same English word
/// may need two words in another language.
public func trc(_ context: StaticString, _ message: StaticString, _ arguments: String...) -> String {
    Localization.format(translation(of: message, in: context), arguments)
}

/// Translations looked up once each, by the address of their literal: gettext's lookup and the
/// copy out of its catalog took 6.4M of the daemon's instructions in the bench's 101 call
/// lifecycles, the card's few texts each time (issue 55). As many as the program has literals;
/// emptied when the locale is set up again.
private let translations = Mutex<[TranslationKey: String]>([:])

private struct TranslationKey: Hashable {
    let context: UInt
    let message: UInt
}

private func translation(of message: StaticString, in context: StaticString?) -> String {
    func lookUpNow() -> String {
        guard let context else { return lookUp(message.description) }
        let key = "\(context)\u{4}\(message)"
        let found = lookUp(key)
        return found == key ? message.description : found
    }
    guard message.hasPointerRepresentation, context?.hasPointerRepresentation ?? true else { return lookUpNow() }
    let key = TranslationKey(context: context.map { UInt(bitPattern: $0.utf8Start) } ?? 0, message: UInt(bitPattern: message.utf8Start))
    if let known = translations.withLock({ $0[key] }) { return known }
    let found = lookUpNow()
    translations.withLock { $0[key] = found }
    return found
}

/// The singular or the plural as the catalog's rules choose for `count`, which is the first
/// argument (`%d`, or `%1$d` beside `%2$s`…: C's format rules, which `msgfmt --check` applies,
/// do not mix numbered and unnumbered ones). Japanese and Korean have one form, German and
/// Portuguese two.
public func trn(_ singular: StaticString, _ plural: StaticString, _ count: Int, _ arguments: String...) -> String {
    let text = singular.description.withCString { one in
        plural.description.withCString { many in
            String(cString: dngettext(Localization.domain, one, many, UInt(clamping: max(count, 0))))
        }
    }
    return Localization.format(text, [String(count)] + arguments)
}

private func lookUp(_ message: String) -> String {
    message.withCString { String(cString: dgettext(Localization.domain, $0)) }
}
