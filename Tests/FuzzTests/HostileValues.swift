import DBus
import Foundation

/// Values that are valid D-Bus but unwelcome: odd strings, extreme numbers,
/// random bytes, malformed UUIDs, deep nesting. Every choice comes from the
/// seeded generator, so a seed replays the same inputs.
struct HostileValues {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// Valid UTF-8 that looks wrong: control characters, markup, escapes,
    /// bidirectional overrides, combining marks, mojibake, lengths at the API's bounds.
    static let oddStrings: [String] = [
        "", " ", "\t\n\r", "\u{1}\u{2}\u{7}\u{8}\u{1b}[31mred\u{1b}[0m", "\u{7f}\u{80}\u{9f}",
        "<b>bold</b> &amp; <i>", "<a href=\"javascript:alert(1)\">x</a>", "]]><!-- -->", "&#0; &#xD800; &bogus;",
        "'; DROP TABLE recents; --", "%s%s%n%x", "\\x00\\xff\\xfe", "\u{FFFD}\u{FFFD}", "Ã©Ã¨Ã¼", "\u{202E}lanigiro\u{202C}",
        "e\u{301}\u{302}\u{303}\u{304}\u{305}", "👩‍👩‍👧‍👦🏳️‍🌈", "\u{200B}\u{200D}\u{FEFF}", "\u{10FFFF}\u{E000}",
        "../../../../etc/passwd", "/dev/zero", "tel:+1-555-0123", "monkeycall://alice?video=1", "monkeycall:%00%ff%",
        "+1 (408) 555-5555", "+44*", "*", "+", String(repeating: "9", count: 40),
        String(repeating: "n", count: 64), String(repeating: "n", count: 65), String(repeating: "é", count: 64),
        String(repeating: "x", count: 1024), String(repeating: "x", count: 1025), String(repeating: "x", count: 4097),
        String(repeating: "<", count: 65_536),
    ]

    /// Strings that are not call UUIDs, or are ones nobody uses.
    static let uuidLike: [String] = [
        "", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "6f9619ff8b86d011b42d00c04fc964ff", "6f9619ff-8b86-d011-b42d-00c04fc964f",
        "6f9619ff-8b86-d011-b42d-00c04fc964fff", "6g9619ff-8b86-d011-b42d-00c04fc964ff", " 6f9619ff-8b86-d011-b42d-00c04fc964f",
        "6f9619ff-8b86-d011-b42d-00c04fc964ff\n", "６f9619ff-8b86-d011-b42d-00c04fc964f", "6f9619ff_8b86_d011_b42d_00c04fc964ff",
    ]

    static let oddPaths: [ObjectPath] = [
        "/", "/org", "/org/monkeycall/Telephony1", "/org/monkeycall/Telephony1/Provider", "/org/monkeycall/Telephony1/Provider/0",
        "/org/monkeycall/Telephony1/Provider/18446744073709551615", "/org/monkeycall/Telephony1/Provider/99999999999999999999999",
        "/org/monkeycall/Telephony1/Call/00000000000000000000000000000000", "/a/b_c/D9",
    ]

    static let oddSignatures: [Signature] = ["", "s", "a{sv}", "v", "(((((s)))))", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaas", "a{oa{sa{sv}}}"]

    mutating func string() -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5: return random.pick(Self.oddStrings)!
        case 5..<7: return random.pick(Self.uuidLike)!
        case 7: return UUID().uuidString
        default:
            // Random scalars from every plane, surrogates excluded (they are not UTF-8).
            let count = Int.random(in: 1...64, using: &random)
            var scalars = String.UnicodeScalarView()
            while scalars.count < count {
                let raw = random.chance(0.5) ? UInt32.random(in: 1...0x7f, using: &random) : UInt32.random(in: 0x80...0x10FFFF, using: &random)
                if let scalar = Unicode.Scalar(raw) { scalars.append(scalar) }
            }
            return String(scalars)
        }
    }

    mutating func bytes(_ count: Int) -> [DBusValue] { (0..<count).map { _ in .byte(UInt8.random(in: 0...255, using: &random)) } }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T {
        random.chance(0.5) ? random.pick([T.min, T.max, 0, 1, T.max - 1, T(truncatingIfNeeded: -1)])! : T.random(in: T.min...T.max, using: &random)
    }

    /// A value of exactly the type `signature` (one complete type), hostile where it can be.
    mutating func value(of signature: Substring, depth: Int = 0) -> DBusValue {
        let code = signature.first!
        switch code {
        case "y": return .byte(integer(UInt8.self))
        case "b": return .bool(random.chance(0.5))
        case "n": return .int16(integer(Int16.self))
        case "q": return .uint16(integer(UInt16.self))
        case "i": return .int32(integer(Int32.self))
        case "u": return .uint32(integer(UInt32.self))
        case "x": return .int64(integer(Int64.self))
        case "t": return .uint64(integer(UInt64.self))
        case "d": return .double(random.pick([.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, Double(bitPattern: random.next())])!)
        case "s": return .string(string())
        case "o": return .objectPath(random.pick(Self.oddPaths)!)
        case "g": return .signature(random.pick(Self.oddSignatures)!)
        case "v": return .variant(anyValue(depth: depth + 1))
        case "a":
            let element = signature.dropFirst()
            if element.first == "{" {
                let inner = element.dropFirst().dropLast()
                let key = inner.prefix(1), valueType = inner.dropFirst()
                if key == "s" && valueType == "v" { return .vardict(vardict(depth: depth)) }
                let entries = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    (key: value(of: key, depth: depth + 1), value: value(of: valueType, depth: depth + 1))
                }
                return .dictionary(key: Signature(stringLiteral: String(key)), value: Signature(stringLiteral: String(valueType)), entries)
            }
            // Long arrays only at the top: nested in every value they would make each message megabytes.
            if element == "y" { return .array(element: "y", bytes(random.pick(depth == 0 ? [0, 1, 7, 4096, 262_145] : [0, 1, 7, 64])!)) }
            let count = depth > 3 ? 0 : random.pick(depth == 0 ? [0, 1, 2, 5, 100] : [0, 1, 2, 5])!
            return .array(element: Signature(stringLiteral: String(element)), (0..<count).map { _ in value(of: element, depth: depth + 1) })
        case "(":
            return .structure(Self.completeTypes(signature.dropFirst().dropLast()).map { value(of: $0, depth: depth + 1) })
        default:
            preconditionFailure("no hostile values for type '\(signature)'")
        }
    }

    /// A value of a random type.
    mutating func anyValue(depth: Int) -> DBusValue {
        let signatures: [Substring] = depth > 3 ? ["s", "u", "b", "ay"] : ["s", "u", "t", "x", "b", "d", "o", "g", "ay", "as", "a{sv}", "(sv)", "v"]
        return value(of: random.pick(signatures)!, depth: depth)
    }

    /// An option dictionary: random keys, some the API knows, values of any type.
    mutating func vardict(depth: Int) -> [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            let key = random.chance(0.6) ? random.pick(OptionKeys.allNames)! : string()
            entries[key] = anyValue(depth: depth + 1)
        }
        return entries
    }

    /// The complete types of a signature (`"sa{sv}"` → `["s", "a{sv}"]`).
    static func completeTypes(_ signature: Substring) -> [Substring] {
        var types: [Substring] = []
        var start = signature.startIndex
        while start < signature.endIndex {
            var end = start
            var open = 0
            repeat {
                switch signature[end] {
                case "(", "{": open += 1
                case ")", "}": open -= 1
                default: break
                }
                end = signature.index(after: end)
            } while end < signature.endIndex && (open > 0 || signature[signature.index(before: end)] == "a")
            types.append(signature[start..<end])
            start = end
        }
        return types
    }

    /// One value of each of a spread of types that are not `signature`.
    static func wrongValues(for signature: String) -> [DBusValue] {
        let spread: [DBusValue] = [
            .byte(1), .bool(true), .int16(-1), .uint16(1), .int32(-1), .uint32(1), .int64(-1), .uint64(1), .double(1.5),
            .string("x"), .objectPath("/x"), .signature("s"), .array(element: "s", [.string("x")]), .array(element: "y", [.byte(0)]),
            .vardict(["Name": .string("x")]), .structure([.string("x"), .uint32(1)]), .variant(.string("x")),
            .dictionary(key: "u", value: "s", [(key: .uint32(1), value: .string("x"))]),
        ]
        return spread.filter { $0.signature.rawValue != signature }
    }

    /// `inner` wrapped in `depth` variants.
    static func nestedVariants(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .variant(value) }
    }

    /// `inner` wrapped in `depth` arrays (`aaa…s`).
    static func nestedArrays(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .array(element: value.signature, [value]) }
    }

    /// `inner` wrapped in `depth` one-member structs (`((…(s)…))`).
    static func nestedStructs(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .structure([value]) }
    }
}

/// Every key of every option dictionary (`a{sv}`) the API defines, with its
/// type, by the method that takes it (`dbus/org.monkeycall.Telephony1.xml`).
enum OptionKeys {
    static let configuration: [String: String] = [
        "Name": "s", "MaximumCallGroups": "u", "MaximumCallsPerCallGroup": "u", "SupportsVideo": "b", "SupportedHandleTypes": "as",
        "IncludesCallsInRecents": "b", "RingtoneSound": "s", "IconName": "s", "IconData": "ay", "URLSchemes": "as", "DesktopEntry": "s",
    ]
    static let update: [String: String] = [
        "Handle": "s", "HandleType": "s", "LocalizedCallerName": "s", "SupportsHolding": "b", "SupportsGrouping": "b",
        "SupportsUngrouping": "b", "SupportsDTMF": "b", "HasVideo": "b",
    ]
    static let actionInfo: [String: String] = ["Date": "t"]
    static let startOptions: [String: String] = ["HandleType": "s", "Video": "b", "Provider": "o", "CallUUID": "s"]
    /// `RequestTransaction`'s action kinds and their keys.
    static let actions: [String: [String: String]] = [
        "start": ["CallUUID": "s", "Handle": "s", "HandleType": "s", "Video": "b", "ContactIdentifier": "s", "Provider": "o"],
        "answer": ["CallUUID": "s"], "end": ["CallUUID": "s"],
        "set-held": ["CallUUID": "s", "OnHold": "b"], "set-muted": ["CallUUID": "s", "Muted": "b"],
        "set-group": ["CallUUID": "s", "GroupWith": "s"], "play-dtmf": ["CallUUID": "s", "Digits": "s", "Type": "s"],
    ]

    static let allNames: [String] = Array(Set(configuration.keys).union(update.keys).union(actionInfo.keys).union(startOptions.keys)
        .union(actions.values.flatMap(\.keys))).sorted()
}
