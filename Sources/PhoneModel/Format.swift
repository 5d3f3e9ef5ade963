import FoundationEssentials
import Localization
import MonkeyCallAPI
import ScreenText

/// Texts made from the service's data, as the window shows them.
public enum Format {
    /// Caller text cleaned as on the notifications: no controls, no bidi overrides, one line.
    public static func clean(_ text: String) -> String { ScreenText.clean(text) }

    /// `M:SS`, or `H:MM:SS` past an hour.
    public static func duration(seconds: UInt64) -> String { LocalTime.duration(seconds: seconds) }

    /// A time the service gave (microseconds since the epoch): the time of day today, else the day,
    /// as the notifications write them (strftime with the translators' formats, not ICU's).
    public static func time(micros: UInt64, now: LocalTime = .now) -> String {
        guard micros > 0 else { return "" }
        let moment = LocalTime(microseconds: micros)
        return moment.sameDay(as: now) ? moment.clock : moment.day
    }

    /// A recent call's status as the user reads it.
    public static func status(_ status: String, outgoing: Bool) -> String {
        switch RecentStatus(rawValue: status) {
        case .answered?: outgoing ? tr("Outgoing") : tr("Incoming")
        case .missed?: tr("Missed")
        case .declined?: tr("Declined")
        case .blocked?: tr("Blocked")
        case .filtered?: tr("Silenced")
        case .failed?: tr("Failed")
        case .cancelled?: outgoing ? tr("Cancelled") : tr("Missed")
        case nil: status
        }
    }

    /// Why a call ended, in plain words.
    public static func endReason(_ reason: String) -> String {
        switch EndReason(rawValue: reason) {
        case .remoteEnded?: tr("The other side hung up")
        case .unanswered?: tr("Nobody answered")
        case .answeredElsewhere?: tr("Answered elsewhere")
        case .declinedElsewhere?: tr("Declined elsewhere")
        case .failed?: tr("The call failed")
        // No reason: the user (or this side) ended it. "local-ended" and "ended" are older rows' words for it.
        case nil where ["", "local-ended", "ended"].contains(reason): tr("Hung up")
        case nil: reason
        }
    }
}
