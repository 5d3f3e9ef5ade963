import Foundation
import ScreenText
import TelephonyCore

/// The words of the call notifications that more than one of them uses.
enum NotificationText {
    /// "Name\nhandle", or the handle alone (also when the name is the handle). Each part is cleaned
    /// before they are joined, so that a newline inside a caller name cannot fake a line of its own.
    static func caller(_ call: Call, _ service: ServiceContext) -> String {
        let name = ScreenText.clean(service.callerName(of: call))
        let handle = ScreenText.clean(call.handle.value)
        return name.isEmpty || name == handle ? handle : "\(name)\n\(handle)"
    }

    /// The caller's name, else the handle: "Call with Alice".
    static func who(_ call: Call, _ service: ServiceContext) -> String {
        let name = service.callerName(of: call)
        return name.isEmpty ? call.handle.value : name
    }

    /// "at 14:02" today, "on 21 Nov at 14:02" before, in local time; `time` in microseconds since the epoch.
    static func when(_ time: UInt64, now: Date = Date()) -> String {
        let date = Date(timeIntervalSince1970: Double(time) / 1_000_000)
        let clock = format(date, "HH:mm")
        return Calendar.current.isDate(date, inSameDayAs: now) ? "at \(clock)" : "on \(format(date, "d MMM")) at \(clock)"
    }

    /// "since 14:02".
    static func since(_ time: UInt64) -> String {
        "since " + format(Date(timeIntervalSince1970: Double(time) / 1_000_000), "HH:mm")
    }

    /// "12:34", or "1:02:03" past an hour; from microseconds.
    static func duration(_ microseconds: UInt64) -> String {
        let seconds = Int(microseconds / 1_000_000)
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    private static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}
