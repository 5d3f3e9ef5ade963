import Foundation
@testable import TelephonyService
import Testing

/// The times and durations in call notifications, which the C library formats (not ICU): they must
/// read as DateFormatter would write them in en_US_POSIX, in the local time zone.
@Suite("Notification text: times and durations")
struct NotificationTextTests {
    static func formatted(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }

    static func microseconds(_ date: Date) -> UInt64 { UInt64(date.timeIntervalSince1970 * 1_000_000) }

    @Test("a call today reads \"at HH:mm\", before today \"on d MMM at HH:mm\", as DateFormatter writes them")
    func whenAgainstDateFormatter() {
        let now = Date()
        // Every 7 hours 13 minutes back over 40 days: each month name in a year, both sides of midnight.
        for step in 0..<130 {
            let date = now.addingTimeInterval(-Double(step) * (7 * 3600 + 13 * 60))
            let clock = Self.formatted(date, "HH:mm")
            let expected = Calendar.current.isDate(date, inSameDayAs: now) ? "at \(clock)" : "on \(Self.formatted(date, "d MMM")) at \(clock)"
            #expect(NotificationText.when(Self.microseconds(date), now: now) == expected)
        }
        for month in 1...12 {
            let date = Calendar.current.date(from: DateComponents(year: 2025, month: month, day: 3, hour: 9, minute: 5))!
            #expect(NotificationText.when(Self.microseconds(date), now: now) == "on 3 \(Self.formatted(date, "MMM")) at 09:05")
        }
    }

    @Test("\"since HH:mm\" in local time")
    func since() {
        let date = Calendar.current.date(from: DateComponents(year: 2026, month: 11, day: 23, hour: 0, minute: 7))!
        #expect(NotificationText.since(Self.microseconds(date)) == "since 00:07")
    }

    @Test("durations: m:ss below an hour, h:mm:ss from one")
    func durations() {
        #expect(NotificationText.duration(0) == "0:00")
        #expect(NotificationText.duration(61_500_000) == "1:01")
        #expect(NotificationText.duration(3_599_000_000) == "59:59")
        #expect(NotificationText.duration(3_600_000_000) == "1:00:00")
        #expect(NotificationText.duration(36_005_000_000) == "10:00:05")
    }
}
