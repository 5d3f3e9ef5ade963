import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

/// The outcomes by name, the last calls sent (a ring buffer, with their outcomes), and the
/// first example of each error that a well-behaved service never answers.
/// Shared by the sending loop and the reply and signal callbacks: all its state is behind one `Mutex`.
final class Recorder: Sendable {
    struct Entry {
        let number: Int
        let call: FuzzCall
        let sentAt: UInt64
        var outcome: String?
        var message: String?
    }

    private struct State {
        var ring: [Entry?]
        var counts: [String: Int] = [:]
        /// The outcomes by part of the surface (`Surface.Name`).
        var surfaceCounts: [String: [String: Int]] = [:]
        /// The answers no well-behaved service gives, by name: the call's own documented errors are proper.
        var improperCounts: [String: Int] = [:]
        var examples: [String: String] = [:]
        /// Seconds from sending to the answer, by member (of the calls still in the ring when answered).
        var latency: [String: (count: Int, total: Double, maximum: Double)] = [:]
        var answered = 0
        var sent = 0
        /// Set when the service's bus name loses its owner.
        var daemonGoneAfter: Int?
        /// Set when the Phone app's bus name loses its owner (a run with `--surface phone`).
        var phoneGoneAfter: Int?
    }

    private let state: Mutex<State>

    init(ringSize: Int) { state = Mutex(State(ring: Array(repeating: nil, count: ringSize))) }

    /// A call about to go out; returns its number.
    func sending(_ call: FuzzCall) -> Int {
        state.withLock { s in
            s.sent += 1
            s.ring[s.sent % s.ring.count] = Entry(number: s.sent, call: call, sentAt: DispatchTime.now().uptimeNanoseconds)
            return s.sent
        }
    }

    /// How call `number` came back: "reply" or the error's name.
    func answered(_ number: Int, _ call: FuzzCall, _ outcome: String, message: String? = nil) {
        state.withLock { s in
            s.answered += 1
            s.counts[outcome, default: 0] += 1
            s.surfaceCounts[call.surface.rawValue, default: [:]][outcome, default: 0] += 1
            let proper = Self.isProper(outcome) || call.documentedErrors.contains(outcome) || outcome.hasPrefix("not sent")
            if !proper {
                s.improperCounts[outcome, default: 0] += 1
                if s.examples[outcome] == nil { s.examples[outcome] = "\(Self.describe(call)) → \(message ?? "")" }
            }
            let slot = number % s.ring.count
            if s.ring[slot]?.number == number {
                let label = s.ring[slot]!.call.label
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - s.ring[slot]!.sentAt) / 1e9
                s.latency[label, default: (0, 0, 0)].count += 1
                s.latency[label, default: (0, 0, 0)].total += seconds
                s.latency[label, default: (0, 0, 0)].maximum = max(s.latency[label]!.maximum, seconds)
                s.ring[slot]?.outcome = outcome
                s.ring[slot]?.message = message
            }
        }
    }

    func daemonGone() { state.withLock { s in if s.daemonGoneAfter == nil { s.daemonGoneAfter = s.sent } } }
    var isDaemonGone: Bool { state.withLock { $0.daemonGoneAfter != nil } }
    /// Set when the service's bus name loses its owner.
    var daemonGoneAfter: Int? { state.withLock { $0.daemonGoneAfter } }
    func phoneGone() { state.withLock { s in if s.phoneGoneAfter == nil { s.phoneGoneAfter = s.sent } } }
    var isPhoneGone: Bool { state.withLock { $0.phoneGoneAfter != nil } }
    /// Set when the Phone app's bus name loses its owner (a run with `--surface phone`).
    var phoneGoneAfter: Int? { state.withLock { $0.phoneGoneAfter } }

    var byName: [String: Int] { state.withLock { $0.counts } }
    var bySurface: [String: [String: Int]] { state.withLock { $0.surfaceCounts } }
    var improper: [String: Int] { state.withLock { $0.improperCounts } }

    /// The members slowest to answer on average: "Member: mean ms (max ms)".
    func slowest(_ count: Int) -> [String] {
        state.withLock { s in
            s.latency.sorted { $0.value.total / Double($0.value.count) > $1.value.total / Double($1.value.count) }.prefix(count).map {
                "\($0.key): \(Int($0.value.total / Double($0.value.count) * 1000)) ms mean, \(Int($0.value.maximum * 1000)) ms max, \($0.value.count) calls"
            }
        }
    }
    var improperExamples: [String: String] { state.withLock { $0.examples } }
    var total: Int { state.withLock { $0.answered } }

    /// The last calls, oldest first.
    var lastCalls: [Entry] { state.withLock { $0.ring.compactMap { $0 }.sorted { $0.number < $1.number } } }

    /// The errors a well-behaved service may answer bad input with (the tests' ProperErrors).
    static func isProper(_ name: String) -> Bool {
        if name == "reply" { return true }
        if ["org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.LimitsExceeded",
            "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownProperty", "org.freedesktop.DBus.Error.PropertyReadOnly"].contains(name) { return true }
        return name.hasPrefix("org.monkeycall.Telephony1.Error.") && name != "org.monkeycall.Telephony1.Error.RecentsUnavailable"
    }

    /// Whether a call carried a value at an extreme: a `t` of 2^63−1 or more, a string of 64 KiB or more.
    static func isExtreme(_ call: FuzzCall) -> Bool { call.arguments.contains { isExtreme($0) } }

    static func isExtreme(_ value: DBusValue) -> Bool {
        switch value {
        // Past Int64: what a conversion to a signed column or a Date traps on.
        case .uint64(let v): return v >= UInt64(Int64.max)
        case .string(let s): return s.utf8.count >= 65_536
        case .variant(let inner): return isExtreme(inner)
        case .array(_, let items): return items.contains { isExtreme($0) }
        case .dictionary(_, _, let entries): return entries.contains { isExtreme($0.key) || isExtreme($0.value) }
        case .structure(let members): return members.contains { isExtreme($0) }
        default: return false
        }
    }

    // MARK: Describing calls, briefly

    static func describe(_ call: FuzzCall) -> String {
        let at = call.destination == Telephony1.busName ? "" : " of \(call.destination)"
        return "\(call.label)(\(call.arguments.map { describe($0) }.joined(separator: ", "))) on \(call.path)\(at) from connection \(call.connection) [\(call.note)]"
    }

    static func describe(_ value: DBusValue, depth: Int = 0) -> String {
        if depth > 6 { return "…" }
        switch value {
        case .byte(let v): return "y \(v)"
        case .bool(let v): return "\(v)"
        case .int16(let v): return "n \(v)"
        case .uint16(let v): return "q \(v)"
        case .int32(let v): return "i \(v)"
        case .uint32(let v): return "u \(v)"
        case .int64(let v): return "x \(v)"
        case .uint64(let v): return "t \(v)"
        case .double(let v): return "d \(v)"
        case .string(let s): return quoted(s)
        case .objectPath(let p): return "o \(p)"
        case .signature(let g): return "g \"\(g)\""
        case .unixFD: return "h"
        case .variant(var inner):
            var levels = 1
            while case .variant(let deeper) = inner { inner = deeper; levels += 1 }
            return levels == 1 ? "<\(describe(inner, depth: depth + 1))>" : "<\(levels) variants: \(describe(inner, depth: depth + 1))>"
        case .array(let element, let items):
            if element == "y" { return "ay[\(items.count) bytes]" }
            let shown = items.prefix(6).map { describe($0, depth: depth + 1) }.joined(separator: ", ")
            return "a\(element)[\(shown)\(items.count > 6 ? ", … \(items.count) in all" : "")]"
        case .dictionary(_, _, let entries):
            if let dict = value.vardict {
                let shown = dict.sorted { $0.key < $1.key }.prefix(8).map { "\(quoted($0.key)): \(describe($0.value, depth: depth + 1))" }
                return "{\(shown.joined(separator: ", "))\(dict.count > 8 ? ", …" : "")}"
            }
            let shown = entries.prefix(4).map { "\(describe($0.key, depth: depth + 1)): \(describe($0.value, depth: depth + 1))" }
            return "{\(shown.joined(separator: ", "))\(entries.count > 4 ? ", …" : "")}"
        case .structure(let members): return "(\(members.map { describe($0, depth: depth + 1) }.joined(separator: ", ")))"
        }
    }

    static func quoted(_ s: String) -> String {
        let bytes = s.utf8.count
        guard bytes > 72 else { return "\"\(s.debugDescriptionBody)\"" }
        let scalars = s.unicodeScalars
        let first = scalars.first.map { String($0) } ?? ""
        if scalars.dropFirst().allSatisfy({ $0 == scalars[scalars.index(after: scalars.startIndex)] }), scalars.count > 1 {
            let second = scalars[scalars.index(after: scalars.startIndex)]
            return "\"\(first.debugDescriptionBody)\" + \(scalars.count - 1) × U+\(String(second.value, radix: 16, uppercase: true)) (\(bytes) bytes)"
        }
        return "\"\(String(s.prefix(40)).debugDescriptionBody)…\" (\(bytes) bytes)"
    }
}

extension String {
    /// The string as a Swift literal would show it, without the quotes.
    var debugDescriptionBody: String { String(debugDescription.dropFirst().dropLast()) }
}
