#if canImport(Glibc)
import Glibc
#endif

/// A moment in the local time zone, from the C library: strftime(3) in the user's LC_TIME, with the
/// formats the translators chose. Not a DateFormatter: each of those builds ICU's date and number
/// formats (about 8% of the daemon's time in the benchmark's call lifecycles, where every answered
/// call shows "since HH:mm"), and touching ICU's data makes it resident in the Phone app.
public struct LocalTime {
    private var parts = tm()

    public init(seconds: time_t) {
        var seconds = seconds
        localtime_r(&seconds, &parts)
    }

    /// `microseconds` since the epoch, as the service gives times.
    public init(microseconds: UInt64) { self.init(seconds: time_t(clamping: microseconds / 1_000_000)) }

    /// Now.
    public static var now: LocalTime { LocalTime(seconds: time(nil)) }

    /// The moment written by strftime(3) with `format`; empty when it does not fit 256 bytes.
    public func formatted(_ format: String) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var parts = parts
        let count = strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func sameDay(as other: LocalTime) -> Bool { parts.tm_year == other.parts.tm_year && parts.tm_yday == other.parts.tm_yday }

    /// The time of day in the user's language ("14:02", "PM 2:02").
    public var clock: String { formatted(Self.clockFormat) }

    /// The day and month in the user's language ("21 Nov", "11月21日").
    public var day: String { formatted(Self.dayFormat) }

    /// The time of day, as strftime(3) writes it; the translator's choice ("%H:%M", "%p %I:%M").
    private static var clockFormat: String {
        // TRANSLATORS: the time of day as strftime(3) writes it: "%H:%M" is 14:02, "%p %l:%M" is PM 2:02.
        trc("strftime", "%H:%M")
    }

    /// A day of the year, as strftime(3) writes it; the translator's choice.
    private static var dayFormat: String {
        // TRANSLATORS: a day and month as strftime(3) writes it: "%-d %b" is 21 Nov, "%m月%d日" is 11月21日.
        trc("strftime", "%-d %b")
    }

    /// A call's length: "M:SS", or "H:MM:SS" past an hour.
    public static func duration(seconds: UInt64) -> String {
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        func two(_ value: UInt64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}
