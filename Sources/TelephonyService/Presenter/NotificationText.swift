import FoundationEssentials
import Glibc
import Localization
import TelephonyCore

/// Words that more than one notification uses: times, durations, sentences. (What a call's card
/// says of its caller is `CallNotification`'s.)
enum NotificationText {
    /// "Incoming call · ShellPhone": a card's summary where the header names another app.
    static func naming(_ summary: String, app: String) -> String {
        // TRANSLATORS: a call card's title followed by the app of the call ("Incoming call · ShellPhone"),
        // where the notification's header names the Phone app instead.
        tr("%1$s · %2$s", summary, app)
    }

    /// "at 14:02" today, "on 21 Nov at 14:02" before, in local time and the user's language;
    /// `time` in microseconds since the epoch.
    static func when(_ time: UInt64, now: Date = Date()) -> String {
        let call = LocalTime(microseconds: time)
        let today = LocalTime(seconds: time_t(now.timeIntervalSince1970.rounded(.down)))
        guard call.sameDay(as: today) else {
            // TRANSLATORS: when a missed call came before today; %1$s is the day ("21 Nov"), %2$s the time of day.
            return tr("on %1$s at %2$s", call.day, call.clock)
        }
        // TRANSLATORS: when a missed call came today; %1$s is the time of day ("14:02").
        return tr("at %1$s", call.clock)
    }

    /// "since 14:02".
    static func since(_ time: UInt64) -> String {
        // TRANSLATORS: when an ongoing call started; %1$s is the time of day ("14:02"): "seit %1$s Uhr".
        tr("since %1$s", LocalTime(microseconds: time).clock)
    }

    /// Sentences of a notification's body, those that are not empty, one space apart.
    static func sentences(_ sentences: String...) -> String { sentences.filter { !$0.isEmpty }.joined(separator: " ") }

    /// "12:34", or "1:02:03" past an hour; from microseconds.
    static func duration(_ microseconds: UInt64) -> String { LocalTime.duration(seconds: microseconds / 1_000_000) }
}
