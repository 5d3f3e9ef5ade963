import DBus
import Foundation

/// SplitMix64: one 64-bit word of state, so a printed seed names the run's choices.
/// (The replies arrive in an order the fuzzer does not control, so the pool of live
/// objects, and with it the run, replays only roughly.)
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<C: Collection>(_ collection: C) -> C.Element? { collection.randomElement(using: &self) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// One of `weighted`'s elements, each as likely as its weight.
    mutating func pick<T>(weighted: [(T, Int)]) -> T {
        var roll = int(0...(weighted.reduce(0) { $0 + $1.1 } - 1))
        for (element, weight) in weighted {
            if roll < weight { return element }
            roll -= weight
        }
        return weighted[weighted.count - 1].0
    }
}

/// Values that are valid D-Bus but unwelcome, and the extremes the issue names.
enum Hostile {
    /// 1 MiB of one letter: past every size bound of the API.
    static let mebibyte = String(repeating: "x", count: 1 << 20)
    /// One letter and 100,000 combining acute accents: one character, 200 KB.
    static let combiningFlood = "e" + String(repeating: "\u{301}", count: 100_000)

    /// Valid UTF-8 that looks wrong: controls, markup, escapes, bidi overrides, combining
    /// marks, lengths at and past the API's bounds.
    static let strings: [String] = [
        "", " ", "\t\n\r", "\u{1}\u{7}\u{1b}[31mred\u{1b}[0m", "\u{7f}\u{80}\u{9f}", "<b>bold</b> &amp; <i>",
        "<a href=\"javascript:alert(1)\">x</a>", "&#0; &#xD800; &bogus;", "'; DROP TABLE recents; --", "%s%s%n%x",
        "\u{FFFD}\u{FFFD}", "Ã©Ã¨Ã¼", "\u{202E}lanigiro\u{202C}", "e\u{301}\u{302}\u{303}\u{304}\u{305}", "👩‍👩‍👧‍👦🏳️‍🌈",
        "\u{200B}\u{200D}\u{FEFF}", "\u{10FFFF}\u{E000}", "../../../../etc/passwd", "/dev/zero", "tel:+1-555-0123",
        "monkeycall://alice?video=1", "monkeycall:%00%ff%", "+1 (408) 555-5555", "+44*", "*", "+", "-1", "0",
        "18446744073709551615", "9223372036854775808", String(repeating: "9", count: 40),
        String(repeating: "n", count: 64), String(repeating: "n", count: 65), String(repeating: "é", count: 64),
        String(repeating: "é", count: 129), String(repeating: "x", count: 256), String(repeating: "x", count: 257),
        String(repeating: "x", count: 1024), String(repeating: "x", count: 1025), String(repeating: "x", count: 4097),
        String(repeating: "<", count: 65_536),
    ]

    /// Strings that are not call UUIDs, or UUIDs nobody uses.
    static let uuidLike: [String] = [
        "", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "6f9619ff8b86d011b42d00c04fc964ff", "6f9619ff-8b86-d011-b42d-00c04fc964f",
        "6f9619ff-8b86-d011-b42d-00c04fc964fff", "6g9619ff-8b86-d011-b42d-00c04fc964ff", " 6f9619ff-8b86-d011-b42d-00c04fc964ff",
        "6f9619ff-8b86-d011-b42d-00c04fc964ff\n", "６f9619ff-8b86-d011-b42d-00c04fc964ff", "6f9619ff_8b86_d011_b42d_00c04fc964ff",
    ]

    static let paths: [ObjectPath] = [
        "/", "/org", "/org/monkeycall/Telephony1", "/org/monkeycall/Telephony1/Provider", "/org/monkeycall/Telephony1/Provider/0",
        "/org/monkeycall/Telephony1/Provider/18446744073709551615", "/org/monkeycall/Telephony1/Provider/99999999999999999999999",
        "/org/monkeycall/Telephony1/Call", "/org/monkeycall/Telephony1/Call/00000000000000000000000000000000", "/a/b_c/D9",
    ]

    static let signatures: [Signature] = ["", "s", "a{sv}", "v", "(((((s)))))", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaas", "a{oa{sa{sv}}}"]

    /// `t` extremes: 0 ("now"), 1, 2^63−1, 2^63, 2^64−1 and their neighbours.
    static let uint64s: [UInt64] = [0, 1, UInt64(Int64.max) - 1, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max - 1, UInt64.max]
    /// `x` extremes, negative ones included.
    static let int64s: [Int64] = [0, 1, -1, 2, Int64.min, Int64.min + 1, Int64.max, Int64.max - 1, Int64.max - 2, 14_085_555_555, -14_085_555_555]

    /// A 1×1 PNG (valid), and a header claiming 100,000 × 100,000 pixels.
    static let tinyPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
    static let hugePNGHeader: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x01, 0x86, 0xA0,
        0x00, 0x01, 0x86, 0xA0, 0x08, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    /// `inner` wrapped in `depth` variants.
    static func nestedVariants(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .variant(value) }
    }

    /// One value of each of a spread of types other than `signature`.
    static func wrongValues(for signature: String) -> [DBusValue] {
        let spread: [DBusValue] = [
            .byte(1), .bool(true), .int16(-1), .uint16(1), .int32(-1), .uint32(1), .int64(-1), .uint64(1), .double(.nan),
            .string("x"), .objectPath("/x"), .signature("s"), .array(element: "s", [.string("x")]), .array(element: "y", [.byte(0)]),
            .vardict(["Name": .string("x")]), .structure([.string("x"), .uint32(1)]), .variant(.string("x")),
            .dictionary(key: "u", value: "s", [(key: .uint32(1), value: .string("x"))]), .array(element: "x", [.int64(-1)]),
        ]
        return spread.filter { $0.signature.rawValue != signature }
    }
}

/// Generates hostile values from a seeded generator.
struct ValueMaker {
    var random: SplitMix64
    /// `t` values no later than now: for `--times-within-contract`.
    var boundedUInt64 = false

    /// Every so often a huge one: 1 MiB, the combining flood or 64 KiB of markup.
    mutating func string() -> String {
        switch random.int(0...199) {
        case 0: return Hostile.mebibyte
        case 1: return Hostile.combiningFlood
        case 2..<110: return random.pick(Hostile.strings)!
        case 110..<140: return random.pick(Hostile.uuidLike)!
        case 140..<150: return UUID().uuidString
        default:
            // Random scalars from every plane (surrogates are not scalars, so never produced).
            let count = random.int(1...48)
            var scalars = String.UnicodeScalarView()
            while scalars.count < count {
                let raw = random.chance(0.5) ? UInt32.random(in: 1...0x7f, using: &random) : UInt32.random(in: 0x80...0x10FFFF, using: &random)
                if let scalar = Unicode.Scalar(raw) { scalars.append(scalar) }
            }
            return String(scalars)
        }
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T {
        random.chance(0.5) ? random.pick([T.min, T.max, 0, 1, T.max - 1, T(truncatingIfNeeded: -1)])! : T.random(in: T.min...T.max, using: &random)
    }

    mutating func uint64() -> UInt64 {
        if boundedUInt64 { return random.chance(0.5) ? 0 : UInt64.random(in: 0...UInt64(Date().timeIntervalSince1970 * 1_000_000), using: &random) }
        return random.chance(0.7) ? random.pick(Hostile.uint64s)! : random.next() }
    mutating func int64() -> Int64 { random.chance(0.7) ? random.pick(Hostile.int64s)! : Int64(bitPattern: random.next()) }

    mutating func bytes(_ count: Int) -> [DBusValue] { (0..<count).map { _ in .byte(UInt8(truncatingIfNeeded: random.next())) } }

    /// A value of exactly `signature` (one complete type), hostile where it can be.
    /// `depth` counts containers so far: the whole message stays within the bus's 64 levels.
    mutating func value(of signature: Substring, depth: Int = 0) -> DBusValue {
        switch signature.first! {
        case "y": return .byte(integer(UInt8.self))
        case "b": return .bool(random.chance(0.5))
        case "n": return .int16(integer(Int16.self))
        case "q": return .uint16(integer(UInt16.self))
        case "i": return .int32(integer(Int32.self))
        case "u": return .uint32(integer(UInt32.self))
        case "x": return .int64(int64())
        case "t": return .uint64(uint64())
        case "d": return .double(random.pick([.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, Double(bitPattern: random.next())])!)
        case "s": return .string(string())
        case "o": return .objectPath(random.pick(Hostile.paths)!)
        case "g": return .signature(random.pick(Hostile.signatures)!)
        case "h": return .string("no fds here")
        case "v":
            // Deep variants, up to what the bus lets through (64 containers in all).
            if depth < 8 && random.chance(0.05) { return Hostile.nestedVariants(random.int(2...max(2, 50 - depth)), around: anyValue(depth: 60)) }
            return .variant(anyValue(depth: depth + 1))
        case "a":
            let element = signature.dropFirst()
            if element.first == "{" {
                let inner = element.dropFirst().dropLast()
                let key = inner.prefix(1), valueType = inner.dropFirst()
                if key == "s" && valueType == "v" { return .vardict(vardict(keys: [:], depth: depth + 2)) }
                let entries = (0..<random.int(0...4)).map { _ in
                    (key: value(of: key, depth: depth + 2), value: value(of: valueType, depth: depth + 2))
                }
                return .dictionary(key: Signature(stringLiteral: String(key)), value: Signature(stringLiteral: String(valueType)), entries)
            }
            if element == "y" { return .array(element: "y", bytes(random.pick(depth == 0 ? [0, 1, 8, 4096, 262_145] : [0, 1, 7, 64])!)) }
            let count = depth > 4 ? 0 : random.pick(depth == 0 ? [0, 1, 2, 5, 100] : [0, 1, 2, 5])!
            return .array(element: Signature(stringLiteral: String(element)), (0..<count).map { _ in value(of: element, depth: depth + 1) })
        case "(":
            return .structure(Signature(stringLiteral: String(signature.dropFirst().dropLast())).completeTypes.map {
                value(of: Substring($0.rawValue), depth: depth + 1)
            })
        default:
            return .string("?")
        }
    }

    /// A value of a random type.
    mutating func anyValue(depth: Int) -> DBusValue {
        let signatures: [Substring] = depth > 4 ? ["s", "u", "b", "t", "x"] : ["s", "u", "t", "x", "b", "d", "o", "g", "ay", "as", "ax", "a{sv}", "(sv)", "v"]
        return value(of: random.pick(signatures)!, depth: depth)
    }

    /// An option dictionary: keys the method knows (with the type `keys` gives) and others.
    /// A known key gets `good` (when given and chosen), a hostile value of its type,
    /// a value of another type, or its value behind extra variants.
    mutating func vardict(keys: [String: String], depth: Int, good: ((String) -> DBusValue?)? = nil) -> [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        let known = keys.keys.sorted()
        for _ in 0..<random.int(0...5) {
            let key = !known.isEmpty && random.chance(0.7) ? random.pick(known)! : (random.chance(0.5) ? random.pick(OptionKeys.allNames)! : string())
            entries[key] = entryValue(key: key, type: keys[key] ?? OptionKeys.typeOfAnyKey[key], depth: depth, good: good)
        }
        return entries
    }

    mutating func entryValue(key: String, type: String?, depth: Int, good: ((String) -> DBusValue?)?) -> DBusValue {
        guard let type else { return anyValue(depth: depth + 1) }
        switch random.int(0...99) {
        case 0..<55: if let value = good?(key) { return value }; return value(of: Substring(type), depth: depth + 1)
        case 55..<85: return value(of: Substring(type), depth: depth + 1)
        case 85..<95: return random.pick(Hostile.wrongValues(for: type))!
        default: return Hostile.nestedVariants(random.int(1...3), around: value(of: Substring(type), depth: depth + 4))
        }
    }
}

/// The keys of the API's option dictionaries with their types, by the argument that takes
/// them (the method specs name the arguments; the documentation gives the keys).
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
    static let actions: [String: [String: String]] = [
        "start": ["CallUUID": "s", "Handle": "s", "HandleType": "s", "Video": "b", "ContactIdentifier": "s", "Provider": "o"],
        "answer": ["CallUUID": "s"], "end": ["CallUUID": "s"],
        "set-held": ["CallUUID": "s", "OnHold": "b"], "set-muted": ["CallUUID": "s", "Muted": "b"],
        "set-group": ["CallUUID": "s", "GroupWith": "s"], "play-dtmf": ["CallUUID": "s", "Digits": "s", "Type": "s"],
    ]

    /// Which keys an `a{sv}` argument takes, by the argument's name in the spec.
    static func keys(forArgument name: String) -> [String: String] {
        switch name {
        case "configuration": configuration
        case "update": update
        case "info": actionInfo
        case "options": startOptions
        default: [:]
        }
    }

    static let typeOfAnyKey: [String: String] = {
        var all: [String: String] = [:]
        for table in [configuration, update, actionInfo, startOptions] + Array(actions.values) { all.merge(table) { first, _ in first } }
        return all
    }()
    static let allNames: [String] = typeOfAnyKey.keys.sorted()
}
