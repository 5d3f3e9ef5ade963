// Shared by monkeycall-fuzz and FuzzTests: the seeded generator and the hostile values both use.
import DBus
import Foundation

/// SplitMix64: one 64-bit word of state, so a printed seed names the run's choices.
/// (The replies arrive in an order the fuzzer does not control, so the pool of live
/// objects, and with it the run, replays only roughly.)
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    public mutating func pick<C: Collection>(_ collection: C) -> C.Element? { collection.randomElement(using: &self) }
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// One of `weighted`'s elements, each as likely as its weight.
    public mutating func pick<T>(weighted: [(T, Int)]) -> T {
        var roll = int(0...(weighted.reduce(0) { $0 + $1.1 } - 1))
        for (element, weight) in weighted {
            if roll < weight { return element }
            roll -= weight
        }
        return weighted[weighted.count - 1].0
    }
}

/// Values that are valid D-Bus but unwelcome, and the extremes the issue names.
public enum Hostile {
    /// 1 MiB of one letter: past every size bound of the API.
    public static let mebibyte = String(repeating: "x", count: 1 << 20)
    /// One letter and 100,000 combining acute accents: one character, 200 KB.
    public static let combiningFlood = "e" + String(repeating: "\u{301}", count: 100_000)

    /// Valid UTF-8 that looks wrong: controls, markup, escapes, bidi overrides, combining
    /// marks, lengths at and past the API's bounds.
    public static let strings: [String] = [
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
    public static let uuidLike: [String] = [
        "", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "6f9619ff8b86d011b42d00c04fc964ff", "6f9619ff-8b86-d011-b42d-00c04fc964f",
        "6f9619ff-8b86-d011-b42d-00c04fc964fff", "6g9619ff-8b86-d011-b42d-00c04fc964ff", " 6f9619ff-8b86-d011-b42d-00c04fc964ff",
        "6f9619ff-8b86-d011-b42d-00c04fc964ff\n", "６f9619ff-8b86-d011-b42d-00c04fc964ff", "6f9619ff_8b86_d011_b42d_00c04fc964ff",
    ]

    public static let paths: [ObjectPath] = [
        "/", "/org", "/org/monkeycall/Telephony1", "/org/monkeycall/Telephony1/Provider", "/org/monkeycall/Telephony1/Provider/0",
        "/org/monkeycall/Telephony1/Provider/18446744073709551615", "/org/monkeycall/Telephony1/Provider/99999999999999999999999",
        "/org/monkeycall/Telephony1/Call", "/org/monkeycall/Telephony1/Call/00000000000000000000000000000000", "/a/b_c/D9",
    ]

    public static let signatures: [Signature] = ["", "s", "a{sv}", "v", "(((((s)))))", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaas", "a{oa{sa{sv}}}"]

    /// `t` extremes: 0 ("now"), 1, 2^63−1, 2^63, 2^64−1 and their neighbours.
    public static let uint64s: [UInt64] = [0, 1, UInt64(Int64.max) - 1, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max - 1, UInt64.max]
    /// `x` extremes, negative ones included.
    public static let int64s: [Int64] = [0, 1, -1, 2, Int64.min, Int64.min + 1, Int64.max, Int64.max - 1, Int64.max - 2, 14_085_555_555, -14_085_555_555]

    /// A 1×1 PNG (valid), and a header claiming 100,000 × 100,000 pixels.
    public static let tinyPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
    public static let hugePNGHeader: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x01, 0x86, 0xA0,
        0x00, 0x01, 0x86, 0xA0, 0x08, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    /// `inner` wrapped in `depth` variants.
    public static func nestedVariants(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .variant(value) }
    }

    /// One value of each of a spread of types other than `signature`.
    public static func wrongValues(for signature: String) -> [DBusValue] {
        let spread: [DBusValue] = [
            .byte(1), .bool(true), .int16(-1), .uint16(1), .int32(-1), .uint32(1), .int64(-1), .uint64(1), .double(.nan),
            .string("x"), .objectPath("/x"), .signature("s"), .array(element: "s", [.string("x")]), .array(element: "y", [.byte(0)]),
            .vardict(["Name": .string("x")]), .structure([.string("x"), .uint32(1)]), .variant(.string("x")),
            .dictionary(key: "u", value: "s", [(key: .uint32(1), value: .string("x"))]), .array(element: "x", [.int64(-1)]),
        ]
        return spread.filter { $0.signature.rawValue != signature }
    }
}
