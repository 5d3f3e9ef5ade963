import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// logind's inhibitor lock during calls, with a stand-in logind on a second private bus playing the system bus.
@Suite("The machine stays awake during calls")
struct SleepInhibitorTests {
    @Test("an answered call takes a sleep:idle block inhibitor naming the caller; it is released when the last call ends")
    func inhibitorDuringCalls() async throws {
        let systemBus = try await PrivateBus.start()
        let logind = try await Logind(address: systemBus.address)
        let fixture = try await ServiceFixture { $0.systemBusAddress = systemBus.address }
        let app = try await fixture.provider("Monkey")

        let alice = try await app.reportIncoming("alice", update: ["LocalizedCallerName": .string("Alice")])
        try await fixture.control("AnswerCall", [.string(alice)])
        try await app.perform("answer")
        let lock = try #require(await logind.inhibitions.next())
        #expect([lock.what, lock.who, lock.why, lock.mode] == ["sleep:idle", "MonkeyCall", "Call with Alice", "block"])
        #expect(!lock.isReleased)

        // A second call answered holds the first; ending it leaves a call up, so the lock stays.
        let bob = try await app.reportIncoming("bob")
        try await fixture.control("AnswerCall", [.string(bob)])
        try await app.perform("set-held")
        try await app.perform("answer")
        try await fixture.control("EndCall", [.string(bob)])
        try await app.perform("end")
        #expect(!lock.isReleased)
        #expect(logind.inhibitions.all.count == 1)

        try await fixture.control("EndCall", [.string(alice)])
        try await app.perform("end")
        #expect(await lock.released())

        // The next call takes a new one.
        let carol = try await app.reportIncoming("carol")
        try await fixture.control("AnswerCall", [.string(carol)])
        try await app.perform("answer")
        #expect(await logind.inhibitions.next()?.why == "Call with carol")
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")
    }

    @Test("without logind on the system bus, calls still work and one line says so")
    func noLogind() async throws {
        let systemBus = try await PrivateBus.start()
        let fixture = try await ServiceFixture { $0.systemBusAddress = systemBus.address }
        let app = try await fixture.provider("Monkey")
        for caller in ["alice", "bob"] {
            let uuid = try await app.reportIncoming(caller)
            try await fixture.control("AnswerCall", [.string(uuid)])
            try await app.perform("answer")
            #expect(await fixture.state(uuid) == "active")
            let end = try await fixture.control("EndCall", [.string(uuid)])
            try await app.perform("end")
            #expect(await fixture.completion(of: try String(dbusValue: end[0]))?.0 == true)
        }
        let warning = try #require(await fixture.warnings.next())
        #expect(warning.contains("logind is not available"), "\(warning)")
        #expect(fixture.warnings.all.count == 1, "\(fixture.warnings.all)")
    }

    @Test("after logind could not be reached, calls in the next 5 minutes do not ask again; the first call after does (manual clock)")
    func askAgainLater() async throws {
        let systemBus = try await PrivateBus.start()
        let fixture = try await ServiceFixture(manualClock: true) { $0.systemBusAddress = systemBus.address }
        let app = try await fixture.provider("Monkey")
        let alice = try await MediaPauseTests.answeredCall(fixture, app, from: "alice")
        let warning = try #require(await fixture.warnings.next())
        #expect(warning.contains("logind is not available"), "\(warning)")
        try await MediaPauseTests.end(fixture, app, alice)

        // logind comes; a call 4 minutes later does not ask, one 5 minutes after the failure does.
        let logind = try await Logind(address: systemBus.address)
        await fixture.advanceClock(by: 240)
        let bob = try await MediaPauseTests.answeredCall(fixture, app, from: "bob")
        try await MediaPauseTests.end(fixture, app, bob)
        await fixture.advanceClock(by: 61)
        _ = try await MediaPauseTests.answeredCall(fixture, app, from: "carol")
        let lock = try #require(await logind.inhibitions.next())
        #expect(lock.why == "Call with carol", "bob's call asked logind: \(lock.why)")
        #expect(logind.inhibitions.all.count == 1)
    }
}
