import DBus
import Foundation

/// Generates hostile values (valid D-Bus, but unwelcome: odd strings, extreme numbers, random
/// bytes, malformed UUIDs, deep nesting) from a seeded generator, so that a seed replays the same
/// inputs. `monkeycall-fuzz` and the hostile-input tests both use it.
public struct ValueMaker {
    public var random: SplitMix64
    /// `t` values no later than now: for `--times-within-contract`.
    public var boundedUInt64 = false

    public init(seed: UInt64, boundedUInt64: Bool = false) {
        random = SplitMix64(seed: seed)
        self.boundedUInt64 = boundedUInt64
    }

    /// Every so often a huge one: 1 MiB, the combining flood or 64 KiB of markup.
    public mutating func string() -> String {
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

    public mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T {
        random.chance(0.5) ? random.pick([T.min, T.max, 0, 1, T.max - 1, T(truncatingIfNeeded: -1)])! : T.random(in: T.min...T.max, using: &random)
    }

    public mutating func uint64() -> UInt64 {
        if boundedUInt64 { return random.chance(0.5) ? 0 : UInt64.random(in: 0...UInt64(Date().timeIntervalSince1970 * 1_000_000), using: &random) }
        return random.chance(0.7) ? random.pick(Hostile.uint64s)! : random.next() }
    public mutating func int64() -> Int64 { random.chance(0.7) ? random.pick(Hostile.int64s)! : Int64(bitPattern: random.next()) }

    public mutating func bytes(_ count: Int) -> [DBusValue] { (0..<count).map { _ in .byte(UInt8(truncatingIfNeeded: random.next())) } }

    /// A value of exactly `signature` (one complete type), hostile where it can be.
    /// `depth` counts containers so far: the whole message stays within the bus's 64 levels.
    public mutating func value(of signature: Substring, depth: Int = 0) -> DBusValue {
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
    public mutating func anyValue(depth: Int) -> DBusValue {
        let signatures: [Substring] = depth > 4 ? ["s", "u", "b", "t", "x"] : ["s", "u", "t", "x", "b", "d", "o", "g", "ay", "as", "ax", "a{sv}", "(sv)", "v"]
        return value(of: random.pick(signatures)!, depth: depth)
    }

    /// An option dictionary: keys the method knows (with the type `keys` gives) and others.
    /// A known key gets `good` (when given and chosen), a hostile value of its type,
    /// a value of another type, or its value behind extra variants.
    public mutating func vardict(keys: [String: String], depth: Int, good: ((String) -> DBusValue?)? = nil) -> [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        let known = keys.keys.sorted()
        for _ in 0..<random.int(0...5) {
            let key = !known.isEmpty && random.chance(0.7) ? random.pick(known)! : (random.chance(0.5) ? random.pick(OptionKeys.allNames)! : string())
            entries[key] = entryValue(key: key, type: keys[key] ?? OptionKeys.typeOfAnyKey[key], depth: depth, good: good)
        }
        return entries
    }

    public mutating func entryValue(key: String, type: String?, depth: Int, good: ((String) -> DBusValue?)?) -> DBusValue {
        guard let type else { return anyValue(depth: depth + 1) }
        switch random.int(0...99) {
        case 0..<55: if let value = good?(key) { return value }; return value(of: Substring(type), depth: depth + 1)
        case 55..<85: return value(of: Substring(type), depth: depth + 1)
        case 85..<95: return random.pick(Hostile.wrongValues(for: type))!
        default: return Hostile.nestedVariants(random.int(1...3), around: value(of: Substring(type), depth: depth + 4))
        }
    }
}

