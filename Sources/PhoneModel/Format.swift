import Foundation
import Localization
import ScreenText

/// Texts made from the service's data, as the window shows them.
public enum Format {
    /// Caller text cleaned as on the notifications: no controls, no bidi overrides, one line.
    public static func clean(_ text: String) -> String { ScreenText.clean(text) }

    /// `M:SS`, or `H:MM:SS` past an hour.
    public static func duration(seconds: UInt64) -> String {
        let (hours, minutes, secs) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        func two(_ n: UInt64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }

    /// A time the service gave (microseconds since the epoch): the time of day today, else the day.
    public static func time(micros: UInt64, now: Date = Date(), calendar: Calendar = .current) -> String {
        guard micros > 0 else { return "" }
        let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale.current
        formatter.setLocalizedDateFormatFromTemplate(calendar.isDate(date, inSameDayAs: now) ? "jj:mm" : "MMMd")
        return formatter.string(from: date)
    }

    /// A recent call's status as the user reads it.
    public static func status(_ status: String, outgoing: Bool) -> String {
        switch status {
        case "answered": outgoing ? tr("Outgoing") : tr("Incoming")
        case "missed": tr("Missed")
        case "declined": tr("Declined")
        case "blocked": tr("Blocked")
        case "filtered": tr("Silenced")
        case "failed": tr("Failed")
        case "cancelled": outgoing ? tr("Cancelled") : tr("Missed")
        default: status
        }
    }

    /// Why a call ended, in plain words.
    public static func endReason(_ reason: String) -> String {
        switch reason {
        case "remote-ended": tr("The other side hung up")
        case "unanswered": tr("Nobody answered")
        case "answered-elsewhere": tr("Answered elsewhere")
        case "declined-elsewhere": tr("Declined elsewhere")
        case "failed": tr("The call failed")
        case "", "local-ended", "ended": tr("Hung up")
        default: reason
        }
    }
}
