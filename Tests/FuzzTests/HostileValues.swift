import DBus
import Foundation

/// Values that are valid D-Bus but unwelcome: odd strings, extreme numbers,
/// random bytes, malformed UUIDs, deep nesting. Every choice comes from the
/// seeded generator, so a seed replays the same inputs.
struct HostileValues {
    /// The generator monkeycall-fuzz uses too.
    var maker: ValueMaker

    init(seed: UInt64) { maker = ValueMaker(seed: seed) }

    /// Valid UTF-8 that looks wrong, strings that are not call UUIDs, odd paths and signatures.
    static let oddStrings = Hostile.strings
    static let uuidLike = Hostile.uuidLike
    static let oddPaths = Hostile.paths
    static let oddSignatures = Hostile.signatures

    mutating func string() -> String { maker.string() }
    mutating func bytes(_ count: Int) -> [DBusValue] { maker.bytes(count) }
    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T { maker.integer(type) }
    /// A value of exactly the type `signature` (one complete type), hostile where it can be.
    mutating func value(of signature: Substring, depth: Int = 0) -> DBusValue { maker.value(of: signature, depth: depth) }
    /// A value of a random type.
    mutating func anyValue(depth: Int) -> DBusValue { maker.anyValue(depth: depth) }
    /// An option dictionary: random keys, some the API knows, values of their types or others.
    mutating func vardict(depth: Int) -> [String: DBusValue] { maker.vardict(keys: [:], depth: depth) }

    static func wrongValues(for signature: String) -> [DBusValue] { Hostile.wrongValues(for: signature) }

    static func nestedVariants(_ depth: Int, around inner: DBusValue) -> DBusValue { Hostile.nestedVariants(depth, around: inner) }

    /// `inner` wrapped in `depth` arrays (`aaa…s`).
    static func nestedArrays(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .array(element: value.signature, [value]) }
    }

    /// `inner` wrapped in `depth` one-member structs (`((…(s)…))`).
    static func nestedStructs(_ depth: Int, around inner: DBusValue) -> DBusValue {
        (0..<depth).reduce(inner) { value, _ in .structure([value]) }
    }
}

