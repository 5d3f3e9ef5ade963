import DBus
import Foundation

/// Values that are valid D-Bus but unwelcome: odd strings, extreme numbers,
/// random bytes, malformed UUIDs, deep nesting. Every choice comes from the
/// seeded generator, so a seed replays the same inputs.
struct HostileValues {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// Valid UTF-8 that looks wrong, strings that are not call UUIDs, odd paths and signatures:
    /// the lists monkeycall-fuzz uses too.
    static let oddStrings = Hostile.strings
    static let uuidLike = Hostile.uuidLike
    static let oddPaths = Hostile.paths
    static let oddSignatures = Hostile.signatures

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

