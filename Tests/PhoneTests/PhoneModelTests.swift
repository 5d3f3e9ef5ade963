import DBus
import MonkeyCallAPI
import MonkeyCallClient
import PhoneModel
import Testing

/// The Phone app's models as plain Swift, against a fake service.
@Suite("Phone models")
struct PhoneModelTests {
    @Test("A pasted tel: link becomes its number")
    func telLinks() {
        #expect(KeypadModel.number(fromText: " tel:+1-408-555-0142;ext=2 ") == "+1-408-555-0142")
        #expect(KeypadModel.number(fromText: "tel:%2B14085550142") == "+14085550142")
        #expect(KeypadModel.number(fromText: "+1 408 555 0142") == "+1 408 555 0142")
    }

    @Test("A recent row: name or number, app and status, duration and end reason; caller text cleaned")
    @MainActor func recentRow() {
        var entry = Telephony1.RecentEntry()
        entry.id = 7
        entry.handle = "+14085550142"
        entry.callerName = "Ada\u{202E}evil"
        entry.providerName = "PyPhone"
        entry.status = "answered"
        entry.endReason = "remote-ended"
        entry.connectedAt = 1_000_000
        entry.endedAt = 63_000_000
        let row = RecentsModel.row(entry)
        #expect(!row.title.contains("\u{202E}"))
        #expect(row.subtitle == "PyPhone · Incoming")
        #expect(row.details.contains("1:02"))
        #expect(!row.missed)
    }

    @Test("Durations")
    func durations() {
        #expect(Format.duration(seconds: 5) == "0:05")
        #expect(Format.duration(seconds: 3_725) == "1:02:05")
    }
}
