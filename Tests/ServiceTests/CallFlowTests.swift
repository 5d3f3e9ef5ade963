import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import TelephonyService
import Testing

@Suite("Calls through the service over a real bus")
struct CallFlowTests {
    @Test("incoming call, answered through the controller, fulfilled by the provider, becomes active")
    func answerFlow() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        #expect(await app.signals.next("DidBegin") != nil)
        let added = try await SignalRecorder(fixture.controller, MatchRule(interface: "org.freedesktop.DBus.ObjectManager"))
        let uuid = try await app.reportIncoming("alice", uuid: UUID().uuidString.uppercased(), update: ["LocalizedCallerName": .string("Alice")])
        #expect(await added.next("InterfacesAdded", where: { $0.first == .objectPath(Telephony1.callPath(uuid)) }) != nil)
        #expect(await fixture.state(uuid) == "ringing")
        #expect(try await fixture.callProperty(uuid, "CallerName") == .string("Alice"))
        #expect(try await fixture.callProperty(uuid, "UUID") == .string(uuid))

        let transaction = try await fixture.request([("answer", ["CallUUID": .string(uuid.uppercased())])])
        let answer = try #require(await app.nextAction("answer"))
        #expect(answer.call == uuid)
        #expect(answer.args["TransactionUUID"] == .string(transaction))
        try await app.fulfill(answer)
        #expect(await fixture.completion(of: transaction)! == (true, ""))
        #expect(await app.signals.next("DidActivateAudioSession") != nil)
        #expect(await fixture.state(uuid) == "active")
        #expect(try await fixture.callProperty(uuid, "HasConnected") == .bool(true))

        // End: the call's object reports ended, then disappears.
        let changes = try await SignalRecorder(fixture.controller, MatchRule(path: Telephony1.callPath(uuid), interface: "org.freedesktop.DBus.Properties"))
        let end = try await fixture.request([("end", ["CallUUID": .string(uuid)])])
        try await app.perform("end")
        #expect(await fixture.completion(of: end)! == (true, ""))
        #expect(await changes.next("PropertiesChanged", where: { $0.count > 1 && $0[1].vardict?["State"] == .string("ended") }) != nil)
        #expect(await added.next("InterfacesRemoved", where: { $0.first == .objectPath(Telephony1.callPath(uuid)) }) != nil)
        #expect(await app.signals.next("DidDeactivateAudioSession") != nil)
        #expect(try await fixture.managedPaths() == [app.path])
    }

    /// Two apps, "First" and "Second"; First's call from alice answered (the transaction's
    /// completion not yet read): where the tests of calls across apps start.
    static func twoAppsFirstAnswered(_ fixture: ServiceFixture) async throws
        -> (first: TestProvider, second: TestProvider, call: String, transaction: String) {
        let first = try await fixture.provider("First")
        let second = try await fixture.provider("Second")
        let call = try await first.reportIncoming("alice")
        let transaction = try await fixture.request([("answer", ["CallUUID": .string(call)])])
        try await first.perform("answer")
        return (first, second, call, transaction)
    }

    @Test("answering a second provider's call holds the first provider's active call")
    func holdAndAnswerAcrossProviders() async throws {
        let fixture = try await ServiceFixture()
        let (first, second, call1, t1) = try await Self.twoAppsFirstAnswered(fixture)
        #expect(await fixture.completion(of: t1)?.0 == true)

        let call2 = try await second.reportIncoming("bob")
        let t2 = try await fixture.request([("answer", ["CallUUID": .string(call2)])])
        let hold = try #require(await first.nextAction("set-held"))
        #expect(hold.call == call1 && hold.args["OnHold"] == .bool(true))
        let answer = try #require(await second.nextAction("answer"))
        #expect(answer.call == call2)
        // Each action is fulfilled on its own; the transaction completes after both.
        try await second.fulfill(answer)
        try await first.fulfill(hold)
        #expect(await fixture.completion(of: t2)! == (true, ""))
        #expect(await fixture.state(call1) == "held")
        #expect(await fixture.state(call2) == "active")
        #expect(await first.signals.next("DidDeactivateAudioSession") != nil)
        #expect(await second.signals.next("DidActivateAudioSession") != nil)
    }

    @Test("`monkeycall resume` on one app's held call while another app's call is active holds that call: never two active")
    func resumeHoldsTheOtherAppsCall() async throws {
        let fixture = try await ServiceFixture()
        let (first, second, call1, _) = try await Self.twoAppsFirstAnswered(fixture)
        let call2 = try await second.reportIncoming("bob")
        _ = try await fixture.request([("answer", ["CallUUID": .string(call2)])])
        try await first.perform("set-held")
        try await second.perform("answer")
        #expect(await fixture.state(call1) == "held")

        // The user resumes the first app's call from the terminal.
        let resume = try ChildProcess(BuiltProducts.path("monkeycall"), ["resume", call1], environment: fixture.bus.environment)
        let hold = try #require(await second.nextAction("set-held"))
        #expect(hold.call == call2 && hold.args["OnHold"] == .bool(true))
        try await second.fulfill(hold)
        let resumed = try #require(await first.nextAction("set-held"))
        #expect(resumed.call == call1 && resumed.args["OnHold"] == .bool(false))
        try await first.fulfill(resumed)
        #expect(await resume.waitForExit() == 0, "\(resume.output)")
        #expect(await fixture.state(call1) == "active")
        #expect(await fixture.state(call2) == "held")
    }

    @Test("outgoing call: start, connecting, connected; mute and DTMF reach the provider")
    func outgoingMuteDTMF() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey", ["SupportsVideo": .bool(true)])
        let reply = try await fixture.control("StartCall", [.string("carol"), .vardict(["Video": .bool(true)])])
        guard case .string(let uuid) = reply[0], case .string(let transaction) = reply[1] else { Issue.record("bad reply"); return }
        let start = try await app.perform("start")
        #expect(start.args["Handle"] == .string("carol") && start.args["Video"] == .bool(true))
        #expect(await fixture.completion(of: transaction)?.0 == true)
        #expect(await fixture.state(uuid) == "dialing")
        try await app.call("ReportOutgoingCallStartedConnecting", [.string(uuid), .uint64(0)])
        #expect(await fixture.state(uuid) == "connecting")
        try await app.call("ReportOutgoingCallConnected", [.string(uuid), .uint64(0)])
        #expect(await fixture.state(uuid) == "active")

        let mute = try await fixture.control("SetMuted", [.string(uuid), .bool(true)])
        #expect(try await app.perform("set-muted").args["Muted"] == .bool(true))
        #expect(await fixture.completion(of: mute.first.flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "")?.0 == true)
        #expect(try await fixture.callProperty(uuid, "Muted") == .bool(true))

        try await fixture.control("PlayDTMF", [.string(uuid), .string("12#"), .string("single-tone")])
        let dtmf = try await app.perform("play-dtmf")
        #expect(dtmf.args["Digits"] == .string("12#") && dtmf.args["Type"] == .string("single-tone"))

        // The remote side hangs up.
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        #expect(await fixture.state(uuid) == nil)
    }

    @Test("an action left unfulfilled times out; the provider hears TimedOutPerformingAction")
    func actionTimeout() async throws {
        let fixture = try await ServiceFixture(manualClock: true)
        let app = try await fixture.provider("Slow")
        let uuid = try await app.reportIncoming()
        let transaction = try await fixture.request([("answer", ["CallUUID": .string(uuid)])])
        let answer = try #require(await app.nextAction("answer"))
        // The action timeout is 10 s: not a moment before (a timed-out answer ends the call).
        await fixture.advanceClock(by: 9.999)
        #expect(await fixture.state(uuid) == "ringing")
        await fixture.advanceClock(by: 0.001)
        let timedOut = try #require(await app.signals.next("TimedOutPerformingAction"))
        #expect(try timedOut.arguments() == [.string(answer.id), .string("answer"), .string(uuid)])
        #expect(await fixture.completion(of: transaction)! == (false, APIError.actionTimedOut.rawValue))
        let late = await dbusError { try await app.fulfill(answer) }
        #expect(late?.name == APIError.unknownAction.rawValue)
    }

    @Test("a failed action completes the transaction with ActionFailed")
    func actionFailed() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let uuid = try await app.reportIncoming()
        let transaction = try await fixture.request([("answer", ["CallUUID": .string(uuid)])])
        let answer = try #require(await app.nextAction("answer"))
        try await app.call("FailAction", [.string(answer.id), .vardict([:])])
        #expect(await fixture.completion(of: transaction)! == (false, APIError.actionFailed.rawValue))
    }

    @Test("a provider that leaves the bus mid-call: its calls end, another provider's call is untouched")
    func providerVanishes() async throws {
        let fixture = try await ServiceFixture()
        let stays = try await fixture.provider("Stays")
        let leaves = try await fixture.provider("Leaves")
        let kept = try await stays.reportIncoming("alice")
        let lost = try await leaves.reportIncoming("bob")
        let removed = try await SignalRecorder(fixture.controller, MatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        leaves.connection.close()
        #expect(await removed.next(where: { $0.first == .objectPath(Telephony1.callPath(lost)) }) != nil)
        #expect(await removed.next(where: { $0.first == .objectPath(leaves.path) }) != nil)
        #expect(await fixture.state(kept) == "ringing")
        #expect(try await fixture.managedPaths().sorted() == [stays.path, Telephony1.callPath(kept)].sorted())
    }

    @Test("ringing calls end unanswered after the ring timeout with an end action")
    func ringTimeout() async throws {
        let fixture = try await ServiceFixture(manualClock: true)
        let app = try await fixture.provider("Monkey")
        let uuid = try await app.reportIncoming()
        // The ring timeout is 45 s: the call rings until then.
        await fixture.advanceClock(by: 44.999)
        #expect(await fixture.state(uuid) == "ringing")
        await fixture.advanceClock(by: 0.001)
        try await app.perform("end")
        let removed = try await SignalRecorder(fixture.controller, MatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        if await fixture.state(uuid) != nil {
            #expect(await removed.next(where: { $0.first == .objectPath(Telephony1.callPath(uuid)) }) != nil)
        }
        #expect(await fixture.state(uuid) == nil)
    }

    @Test("an idle service has no timer pending: none before the first call, none once the calls have ended, however they ended")
    func idleServiceHasNoTimers() async throws {
        let fixture = try await ServiceFixture(manualClock: true)
        #expect(await fixture.pendingTimers() == 0)
        let app = try await fixture.provider("Monkey")
        #expect(await fixture.pendingTimers() == 0)

        // Answered, then ended by the user.
        let answered = try await app.reportIncoming("alice")
        #expect(await fixture.pendingTimers() == 1) // its ring timeout
        try await fixture.control("AnswerCall", [.string(answered)])
        try await app.perform("answer")
        try await fixture.control("EndCall", [.string(answered)])
        try await app.perform("end")
        #expect(await fixture.state(answered) == nil)
        #expect(await fixture.pendingTimers() == 0)

        // Ended by the remote side while it rang.
        let hungUp = try await app.reportIncoming("bob")
        try await app.call("ReportCallEnded", [.string(hungUp), .string("remote-ended"), .uint64(0)])
        #expect(await fixture.pendingTimers() == 0)

        // Rang out: the ring timeout's end action.
        let rangOut = try await app.reportIncoming("carol")
        await fixture.advanceClock(by: 45)
        try await app.perform("end")
        #expect(await fixture.state(rangOut) == nil)
        #expect(await fixture.pendingTimers() == 0)

        // Outgoing: started, connected, held and resumed, ended by the provider.
        guard case .string(let outgoing)? = try await fixture.control("StartCall", [.string("dave"), .vardict([:])]).first else {
            Issue.record("no call UUID"); return
        }
        try await app.perform("start")
        try await app.call("ReportOutgoingCallConnected", [.string(outgoing), .uint64(0)])
        try await fixture.control("SetHeld", [.string(outgoing), .bool(true)])
        try await app.perform("set-held")
        try await fixture.control("SetHeld", [.string(outgoing), .bool(false)])
        try await app.perform("set-held")
        try await app.call("ReportCallEnded", [.string(outgoing), .string("remote-ended"), .uint64(0)])
        #expect(await fixture.state(outgoing) == nil)
        #expect(await fixture.pendingTimers() == 0)
    }
}

func dbusError(_ body: () async throws -> Void) async -> DBusError? {
    do {
        try await body()
        return nil
    } catch {
        return DBusError(error)
    }
}
