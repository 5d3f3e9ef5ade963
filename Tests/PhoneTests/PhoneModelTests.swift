import DBus
import MonkeyCallAPI
import MonkeyCallClient
@testable import PhoneModel
import ScreenText
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

    @Test("The call action (a link, a search result, another program): a number with control or bidi characters is shown cleaned and not called at once, and the user is told; a clean one is (issue 53: dialled at once)")
    @MainActor func callActionRefusesDressedNumbers() {
        let model = PhoneModel(backend: FakeBackend())
        var told: [String] = []
        model.keypad.report.toast = { told.append($0) }
        #expect(!model.keypad.take("\u{1B}[31m+1900555\t0100\u{202E}"))
        #expect(model.keypad.number == "[31m+1900555 0100", "\(model.keypad.number.debugDescription)")
        #expect(told.count == 1, "\(told)")
        for dressed in ["+1900555\u{200E}0100", "tel:+1900555%E2%80%AE0100", "+1900555\u{7F}0100"] {
            #expect(!model.keypad.take(dressed), "\(dressed.debugDescription)")
            #expect(ScreenText.handleHazard(in: model.keypad.number) == nil, "\(model.keypad.number.debugDescription)")
        }
        #expect(model.keypad.take("tel:+1-408-555-0142"))
        #expect(model.keypad.number == "+1-408-555-0142")
        #expect(told.count == 4, "\(told)")
        #expect(KeypadModel.number(fromText: "+1 408\n555 0142") == "+1 408 555 0142")
    }

    @Test("The call action with a handle over 1 KiB (100,000 combining accents: the window froze 4.6 s laying it out): not put on the keypad, not called, the user told; a search over 1 KiB is cut between scalars")
    @MainActor func callActionRefusesHugeHandles() {
        let model = PhoneModel(backend: FakeBackend())
        var told: [String] = []
        model.keypad.report.toast = { told.append($0) }
        #expect(model.keypad.take("+14085550142"))
        let huge = "e" + String(repeating: "\u{301}", count: 100_000)
        #expect(!model.keypad.take(huge))
        #expect(model.keypad.number == "+14085550142", "the keypad took \(model.keypad.number.utf8.count) bytes")
        #expect(told.count == 1 && told.first?.contains("too long") == true, "\(told)")
        let cut = ScreenText.prefix(huge, maximumBytes: 1_024)
        #expect(cut.utf8.count == 1_023 && huge.unicodeScalars.starts(with: cut.unicodeScalars), "\(cut.utf8.count)")
        #expect(ScreenText.prefix("+1 408", maximumBytes: 1_024) == "+1 408")
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

    @Test("The second call under the one shown: merged only with a call of the same app that both can group; switched to only when the one shown can be held")
    @MainActor func secondCall() {
        func call(_ uuid: String, _ provider: String, name: String, held: Bool = false, grouping: Bool = true, holding: Bool = true,
                  group: String = "") -> CallSnapshot {
            CallSnapshot(path: try! ObjectPath("/org/monkeycall/Telephony1/Call/\(uuid)"), properties: [
                Telephony1.Call.uuid.name: .string(uuid), Telephony1.Call.state.name: .string(held ? "held" : "active"),
                Telephony1.Call.callerName.name: .string(name), Telephony1.Call.handle.name: .string("+14085550100"),
                Telephony1.Call.provider.name: .objectPath(try! ObjectPath(provider)), Telephony1.Call.onHold.name: .bool(held),
                Telephony1.Call.supportsGrouping.name: .bool(grouping), Telephony1.Call.supportsHolding.name: .bool(holding),
                Telephony1.Call.group.name: .string(group), Telephony1.Call.startedAt.name: .uint64(uuid == "a" ? 1 : 2),
            ])
        }
        let one = "/org/monkeycall/Telephony1/Provider/1", two = "/org/monkeycall/Telephony1/Provider/2"
        func other(_ shown: CallSnapshot, _ second: CallSnapshot) -> OtherCall? {
            let model = CallsModel(backend: FakeBackend())
            model.added(shown)
            model.added(second)
            model.show(shown.uuid)
            return model.view()?.other
        }
        let same = other(call("b", one, name: "Dora"), call("a", one, name: "Bob\u{202E}", held: true))
        #expect(same?.summary == "Bob · On hold")
        #expect(same?.canMerge == true && same?.canSwitch == true)
        #expect(other(call("b", one, name: "Dora"), call("a", two, name: "Bob", held: true))?.canMerge == false)
        #expect(other(call("b", one, name: "Dora", grouping: false), call("a", one, name: "Bob", held: true))?.canMerge == false)
        #expect(other(call("b", one, name: "Dora", holding: false), call("a", one, name: "Bob", held: true))?.canSwitch == false)
        let merged = other(call("b", one, name: "Dora", group: "g1"), call("a", one, name: "Bob", group: "g1"))
        #expect(merged?.merged == true && merged?.canMerge == false && merged?.canSwitch == false)
        #expect(merged?.summary == "Bob · In this call")
    }

    @Test("Durations")
    func durations() {
        #expect(Format.duration(seconds: 5) == "0:05")
        #expect(Format.duration(seconds: 3_725) == "1:02:05")
    }

    @Test("10,000 Recents load a page of 200 at a time as the list is scrolled to its end, never all at once; the last page says there is no more")
    @MainActor func recentsInPages() async {
        let backend = FakeBackend(recents: 10_000)
        let model = PhoneModel(backend: backend)
        await model.recents.load()
        #expect(model.recents.entries.count == 200 && model.recents.hasMore)
        #expect(model.recents.entries.first?.id == 10_000)
        await model.recents.loadMore()
        await model.recents.loadMore()
        #expect(model.recents.entries.count == 600)
        #expect(backend.state.withLock { $0.recentsRequests.map(\.limit) } == [200, 200, 200])
        #expect(backend.state.withLock { $0.recentsRequests.map(\.offset) } == [0, 200, 400])
        for _ in 0..<60 { await model.recents.loadMore() }
        #expect(model.recents.entries.count == 10_000 && !model.recents.hasMore)
        #expect(Set(model.recents.entries.map(\.id)).count == 10_000)
        // At the end nothing more is asked for.
        let asked = backend.state.withLock { $0.recentsRequests.count }
        await model.recents.loadMore()
        #expect(backend.state.withLock { $0.recentsRequests.count } == asked && asked == 51)
    }

    @Test("10,000 contacts: a search shows at most 200, and asks the service for no more")
    @MainActor func contactsBounded() async {
        let backend = FakeBackend(contacts: 10_000)
        let model = PhoneModel(backend: backend)
        await model.contacts.search("")
        #expect(model.contacts.rows.count == 200)
        await model.contacts.search("Contact 99")
        #expect(model.contacts.rows.count == 111) // 99, 990–999, 9900–9999
        #expect(backend.state.withLock { $0.contactLimits } == [200, 200])
    }

    @Test("The missed count: a MissedCount signal heard while Recents loads wins over the load's older answer (they reach the app in either order)")
    @MainActor func missedCountRace() async throws {
        let backend = FakeBackend(recents: 3)
        backend.state.withLock { state in
            state.missedCount = 1
            state.holdMissedCount = true
        }
        let model = PhoneModel(backend: backend)
        let load = Task { @MainActor in await model.recents.load() }
        // The load waits for its MissedCount answer; meanwhile the service says 4, then answers 1.
        let deadline = ContinuousClock.now + .seconds(10)
        while backend.state.withLock({ $0.heldMissedCount == nil }), ContinuousClock.now < deadline { await Task.yield() }
        model.recents.missedCountChanged(4)
        #expect(model.recents.missedCount == 4)
        #expect(backend.releaseMissedCount())
        await load.value
        #expect(model.recents.missedCount == 4)

        // With no signal meanwhile, the load's answer is taken.
        backend.state.withLock { state in
            state.missedCount = 2
            state.holdMissedCount = false
        }
        await model.recents.load()
        #expect(model.recents.missedCount == 2)
    }
}

