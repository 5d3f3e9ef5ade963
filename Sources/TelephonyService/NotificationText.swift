import Foundation
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

    /// "at 14:02" today, "on 21 Nov at 14:02" before, in local time; `time` in microseconds since the epoch.
    static func when(_ time: UInt64, now: Date = Date()) -> String {
        let call = LocalTime(microseconds: time)
        let today = LocalTime(seconds: time_t(now.timeIntervalSince1970.rounded(.down)))
        return call.sameDay(as: today) ? "at \(call.clock)" : "on \(call.dayAndMonth) at \(call.clock)"
    }

    /// "since 14:02".
    static func since(_ time: UInt64) -> String {
        "since " + LocalTime(microseconds: time).clock
    }

    /// "12:34", or "1:02:03" past an hour; from microseconds.
    static func duration(_ microseconds: UInt64) -> String {
        let seconds = Int(microseconds / 1_000_000)
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }

    fileprivate static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// A moment in the local time zone, from the C library. Not a DateFormatter: each of those builds
/// ICU's date and number formats (about 8% of the daemon's time in the benchmark's call
/// lifecycles, where every answered call shows "since HH:mm"). The patterns are fixed
/// (en_US_POSIX), so nothing here needs ICU.
private struct LocalTime {
    private var parts = tm()

    init(seconds: time_t) {
        var seconds = seconds
        localtime_r(&seconds, &parts)
    }

    init(microseconds: UInt64) { self.init(seconds: time_t(clamping: microseconds / 1_000_000)) }

    /// "HH:mm".
    var clock: String { "\(NotificationText.twoDigits(Int(parts.tm_hour))):\(NotificationText.twoDigits(Int(parts.tm_min)))" }

    /// "d MMM": "21 Nov".
    var dayAndMonth: String { "\(parts.tm_mday) \(Self.months[Int(parts.tm_mon)])" }

    func sameDay(as other: LocalTime) -> Bool { parts.tm_year == other.parts.tm_year && parts.tm_yday == other.parts.tm_yday }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
