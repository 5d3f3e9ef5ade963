import Foundation
import Localization
import ScreenText
import TelephonyCore

/// The words of the call notifications that more than one of them uses.
enum NotificationText {
    /// "Name\nhandle", or the handle alone (also when the name is the handle). Each part is cleaned
    /// before they are joined, so that a newline inside a caller name cannot fake a line of its own.
    @TelephonyActor static func caller(_ call: Call, _ service: ServiceContext) -> String {
        let name = ScreenText.clean(service.callerName(of: call))
        let handle = ScreenText.clean(call.handle.value)
        return name.isEmpty || name == handle ? handle : "\(name)\n\(handle)"
    }

    /// The caller's name, else the handle: "Call with Alice".
    @TelephonyActor static func who(_ call: Call, _ service: ServiceContext) -> String {
        let name = service.callerName(of: call)
        return name.isEmpty ? call.handle.value : name
    }

    /// "at 14:02" today, "on 21 Nov at 14:02" before, in local time and the user's language;
    /// `time` in microseconds since the epoch.
    static func when(_ time: UInt64, now: Date = Date()) -> String {
        let call = LocalTime(microseconds: time)
        let today = LocalTime(seconds: time_t(now.timeIntervalSince1970.rounded(.down)))
        guard call.sameDay(as: today) else {
            // TRANSLATORS: when a missed call came before today; %1$s is the day ("21 Nov"), %2$s the time of day.
            return tr("on %1$s at %2$s", call.formatted(dayFormat), call.formatted(clockFormat))
        }
        // TRANSLATORS: when a missed call came today; %1$s is the time of day ("14:02").
        return tr("at %1$s", call.formatted(clockFormat))
    }

    /// "since 14:02".
    static func since(_ time: UInt64) -> String {
        // TRANSLATORS: when an ongoing call started; %1$s is the time of day ("14:02"): "seit %1$s Uhr".
        tr("since %1$s", LocalTime(microseconds: time).formatted(clockFormat))
    }

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

    /// Sentences of a notification's body, those that are not empty, one space apart.
    static func sentences(_ sentences: String...) -> String { sentences.filter { !$0.isEmpty }.joined(separator: " ") }

    /// "12:34", or "1:02:03" past an hour; from microseconds.
    static func duration(_ microseconds: UInt64) -> String {
        let seconds = Int(microseconds / 1_000_000)
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// A moment in the local time zone, from the C library: strftime in the user's LC_TIME. Not a
/// DateFormatter: each of those builds ICU's date and number formats (about 8% of the daemon's
/// time in the benchmark's call lifecycles, where every answered call shows "since HH:mm").
private struct LocalTime {
    private var parts = tm()

    init(seconds: time_t) {
        var seconds = seconds
        localtime_r(&seconds, &parts)
    }

    init(microseconds: UInt64) { self.init(seconds: time_t(clamping: microseconds / 1_000_000)) }

    /// The moment written by strftime(3) with `format`; empty when it does not fit 256 bytes.
    func formatted(_ format: String) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var parts = parts
        let count = strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func sameDay(as other: LocalTime) -> Bool { parts.tm_year == other.parts.tm_year && parts.tm_yday == other.parts.tm_yday }
}
