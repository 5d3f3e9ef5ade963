import Foundation
import Testing
@testable import TelephonyCore

@Suite struct AnswerFlowTests {
    @Test func answerIsDispatchedFulfilledAndActivatesAudio() throws {
        let (f, p) = try Fixture.oneCall()
        f.log.clear()
        let t = try f.request(.answer(.n(1)))
        #expect(t.requester == ":1.99")
        #expect(t.state == .pending)
        #expect(t.actions.count == 1)
        let action = t.actions[0]
        #expect(action.kind == .answer)
        #expect(action.provider == p.id)
        #expect(action.transactionID == t.id)
        #expect(action.deadline == f.clock.now + 10_000_000)
        #expect(f.log.trace == ["perform:1:answer:0000"])
        #expect(f.board.call(.n(1))?.state == .ringing) // Not before the provider fulfils.
        f.clock.advance(by: 2)
        try f.board.fulfillAction(provider: p.id, action: action.id, at: 0)
        #expect(f.log.trace == ["perform:1:answer:0000", "changed:0000:active", "audio+1", "completed:ok"])
        let call = try #require(f.board.call(.n(1)))
        #expect(call.hasConnected && call.wasAnswered)
        #expect(call.connectedAt == f.clock.now)
        #expect(f.board.audioSessionHolder == p.id)
        let (completed, error) = try #require(f.log.completions.first)
        #expect(error == nil)
        #expect(completed.id == t.id)
        #expect(completed.state == .succeeded)
        // A completed action is unknown afterwards.
        expectError(.unknownAction(action.id)) { try f.board.fulfillAction(provider: p.id, action: action.id, at: 0) }
        expectError(.unknownAction(action.id)) { try f.board.failAction(provider: p.id, action: action.id) }
    }

    @Test func fulfilTimeIsUsedWhenGiven() throws {
        let (f, _) = try Fixture.oneCall()
        try f.request(.answer(.n(1)))
        let at = f.clock.now + 42
        try f.fulfil("answer", .n(1), at: at)
        #expect(f.board.call(.n(1))?.connectedAt == at)
    }

    @Test func endingTheActiveCallDeactivatesAudio() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        f.log.clear()
        try f.request(.end(.n(1)))
        try f.fulfil("end", .n(1))
        #expect(f.log.trace == ["perform:1:end:0000", "changed:0000:ended", "audio-1", "removed:0000", "completed:ok"])
        #expect(f.log.removed.first?.endReason == nil) // The user's own end.
        #expect(f.board.audioSessionHolder == nil)
    }

    @Test func decliningIsAnEndAction() throws {
        let (f, _) = try Fixture.oneCall()
        try f.request(.end(.n(1)))
        try f.fulfil("end", .n(1))
        #expect(f.board.calls.isEmpty)
        #expect(f.log.removed.first?.endReason == nil)
        #expect(f.log.removed.first?.hasConnected == false)
    }

    @Test func failedAnswerEndsTheCallAsFailed() throws {
        let (f, _) = try Fixture.oneCall()
        try f.request(.answer(.n(1)))
        f.log.clear()
        try f.fail("answer", .n(1))
        #expect(f.log.trace == ["changed:0000:ended", "removed:0000", "completed:ActionFailed"])
        #expect(f.log.removed.first?.endReason == .failed)
        #expect(f.log.completions.first?.1?.message.contains("answer") == true)
    }

    @Test func failedEndStillEndsTheCall() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        try f.request(.end(.n(1)))
        try f.fail("end", .n(1))
        #expect(f.board.calls.isEmpty)
        #expect(f.log.removed.first?.endReason == .failed)
        #expect(f.log.completions.last?.1?.name == "ActionFailed")
    }

    @Test func failedMuteChangesNothing() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        try f.request(.setMuted(.n(1), true))
        f.log.clear()
        try f.fail("set-muted", .n(1))
        #expect(f.log.trace == ["completed:ActionFailed"])
        #expect(f.board.call(.n(1))?.muted == false)
    }

    @Test func muteAndUnmute() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        try f.request(.setMuted(.n(1), true))
        #expect(f.board.call(.n(1))?.muted == false)
        try f.fulfil("set-muted", .n(1))
        #expect(f.board.call(.n(1))?.muted == true)
        #expect(f.log.changed.last?.muted == true)
        try f.request(.setMuted(.n(1), false))
        try f.fulfil("set-muted", .n(1))
        #expect(f.board.call(.n(1))?.muted == false)
    }

    @Test func holdAndResume() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        f.log.clear()
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.board.call(.n(1))?.onHold == true)
        #expect(f.board.call(.n(1))?.heldBySystemFor == nil) // The user held it.
        #expect(f.board.audioSessionHolder == nil)
        // Holding a held call is accepted and dispatched (a no-op for the state).
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .held)
        try f.request(.setHeld(.n(1), false))
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .active)
        #expect(f.log.audio == ["-1", "+1"])
    }
}

@Suite struct ActionTimeoutTests {
    @Test func actionTimesOutAfterTenSeconds() throws {
        let (f, p) = try Fixture.oneCall(answered: true)
        let t = try f.request(.setMuted(.n(1), true))
        let action = t.actions[0]
        f.log.clear()
        f.clock.advance(by: 9.99)
        #expect(f.log.events.isEmpty)
        f.clock.advance(by: 0.01)
        #expect(f.log.trace == ["timeout:1:set-muted:0000", "completed:ActionTimedOut"])
        #expect(f.log.timedOut.first?.id == action.id)
        let (completed, error) = try #require(f.log.completions.first)
        #expect(completed.id == t.id)
        #expect(error?.name == "ActionTimedOut")
        #expect(error?.message.contains("10 s") == true)
        expectError(.unknownAction(action.id)) { try f.board.fulfillAction(provider: p.id, action: action.id, at: 0) }
        #expect(f.board.call(.n(1))?.muted == false)
        #expect(f.board.transaction(t.id) == nil)
    }

    @Test func timedOutAnswerEndsTheCallFailed() throws {
        let (f, _) = try Fixture.oneCall()
        try f.request(.answer(.n(1)))
        f.log.clear()
        f.clock.advance(by: 10)
        #expect(f.log.trace == ["timeout:1:answer:0000", "changed:0000:ended", "removed:0000", "completed:ActionTimedOut"])
        #expect(f.log.removed.first?.endReason == .failed)
    }

    @Test func actionTimeoutIsConfigurable() throws {
        let f = Fixture(options: .init(actionTimeout: 2))
        let p = try f.register()
        try f.activeIncoming(p, .n(1))
        try f.request(.setMuted(.n(1), true))
        f.clock.advance(by: 1.9)
        #expect(f.log.timedOut.isEmpty)
        f.clock.advance(by: 0.1)
        #expect(f.log.timedOut.count == 1)
    }
}

@Suite struct TransactionValidationTests {
    @Test func emptyTransaction() throws {
        let f = Fixture()
        expectError(.emptyTransaction) { _ = try f.board.requestTransaction([], requester: ":1.9") }
    }

    @Test func unknownCall() throws {
        let (f, _) = try Fixture.oneCall()
        f.log.clear()
        expectError(.unknownCallUUID(.n(2))) { try f.request(.answer(.n(1)), .end(.n(2))) }
        #expect(f.log.events.isEmpty) // Atomic: the valid answer was not dispatched.
        #expect(f.board.allPendingActions.isEmpty)
        expectError(.unknownCallUUID(.n(3))) { try f.request(.setMuted(.n(3), true)) }
    }

    @Test func startWithExistingUUID() throws {
        let (f, _) = try Fixture.oneCall()
        let h = Handle(type: .phoneNumber, value: "+1")
        expectError(.callUUIDAlreadyExists(.n(1))) { try f.request(.start(.n(1), handle: h)) }
        expectError(.callUUIDAlreadyExists(.n(2))) { try f.request(.start(.n(2), handle: h), .start(.n(2), handle: h)) }
        #expect(f.board.calls.count == 1)
    }

    @Test func invalidActionsNameTheActionAndState() throws {
        let (f, p) = try Fixture.oneCall()
        try f.activeIncoming(p, .n(2), CallUpdate(supportsHolding: false, supportsDTMF: false))
        f.log.clear()
        // Answering an active call.
        let active = expectErrorNamed("InvalidAction") { try f.request(.answer(.n(2))) }
        #expect(active?.message.contains("answer") == true)
        #expect(active?.message.contains("active") == true)
        // Holding a ringing call; a call that cannot hold.
        let ringing = expectErrorNamed("InvalidAction") { try f.request(.setHeld(.n(1), true)) }
        #expect(ringing?.message.contains("ringing") == true)
        let noHold = expectErrorNamed("InvalidAction") { try f.request(.setHeld(.n(2), true)) }
        #expect(noHold?.message.contains("holding") == true)
        // DTMF on a call without DTMF; on a ringing call.
        let noDTMF = expectErrorNamed("InvalidAction") { try f.request(.playDTMF(.n(2), digits: "1")) }
        #expect(noDTMF?.message.contains("DTMF") == true)
        expectErrorNamed("InvalidAction") { try f.request(.playDTMF(.n(1), digits: "1")) }
        // An action after an end in the same transaction.
        let afterEnd = expectErrorNamed("InvalidAction") { try f.request(.end(.n(1)), .setMuted(.n(1), true)) }
        #expect(afterEnd?.message.contains("ends it") == true)
        // Two answers/starts in one transaction.
        expectErrorNamed("InvalidAction") { try f.request(.answer(.n(1)), .start(.n(4), handle: Handle(value: "x"))) }
        #expect(f.log.events.isEmpty)
        // Answering while call 2 cannot hold: the system ends call 2 first.
        let t = try f.request(.answer(.n(1)))
        #expect(t.actions.map(\.kind.name) == ["end", "answer"])
        let again = expectErrorNamed("InvalidAction") { try f.request(.answer(.n(1))) }
        #expect(again?.message.contains("already being answered") == true)
        let ending = expectErrorNamed("InvalidAction") { try f.request(.setMuted(.n(2), true)) }
        #expect(ending?.message.contains("already being ended") == true)
    }

    @Test func answeringAnOutgoingCallIsInvalid() throws {
        let f = Fixture()
        try f.register()
        try f.request(.start(.n(3), handle: Handle(value: "bob")))
        let outgoing = expectErrorNamed("InvalidAction") { try f.request(.answer(.n(3))) }
        #expect(outgoing?.message.contains("outgoing") == true)
    }

    @Test(arguments: ["0123456789", "*#", "ABCDabcd", ",;pwPW", "1w2p3"])
    func dtmfAcceptsValidDigits(digits: String) throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        let t = try f.request(.playDTMF(.n(1), digits: digits, type: .singleTone))
        #expect(t.actions.first?.kind == .playDTMF(digits: digits, type: .singleTone))
        f.log.clear()
        try f.fulfil("play-dtmf", .n(1))
        #expect(f.log.trace == ["completed:ok"]) // DTMF changes nothing.
    }

    @Test(arguments: ["", "12x", "1 2", "E", "٣", "+1"])
    func dtmfRejectsInvalidDigits(digits: String) throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        expectErrorNamed("InvalidAction") { try f.request(.playDTMF(.n(1), digits: digits, type: .hardPause)) }
    }

    @Test func dtmfTooLongIsInvalidArgs() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        expectErrorNamed("InvalidArgs") { try f.request(.playDTMF(.n(1), digits: String(repeating: "1", count: 1025))) }
    }

    @Test func transactionLimits() throws {
        let f = Fixture(options: .init(limits: .with { $0.maximumActionsPerTransaction = 2; $0.maximumPendingTransactions = 2 }))
        let p = try f.register()
        try f.activeIncoming(p, .n(1))
        expectErrorNamed("LimitsExceeded") {
            try f.request(.setMuted(.n(1), true), .setMuted(.n(1), false), .setMuted(.n(1), true))
        }
        try f.request(.setMuted(.n(1), true))
        try f.request(.setMuted(.n(1), false))
        let error = expectErrorNamed("LimitsExceeded") { try f.request(.setMuted(.n(1), true)) }
        #expect(error?.message.contains("2") == true)
        f.clock.advance(by: 10) // They time out and make room.
        try f.request(.setMuted(.n(1), true))
    }

    @Test func unentitledProviderConnection() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.incoming(a, .n(1))
        try f.incoming(b, .n(2))
        f.log.clear()
        // B's connection may not answer A's call.
        let error = expectErrorNamed("Unentitled") { try f.request(.answer(.n(1)), requester: ":1.2") }
        #expect(error?.message.contains("A (1)") == true)
        // Nor start a call with A.
        expectErrorNamed("Unentitled") { try f.request(.start(.n(3), handle: Handle(value: "x"), provider: a.id), requester: ":1.2") }
        #expect(f.log.events.isEmpty)
        // But its own call, yes; and a connection with no provider may act on any call.
        try f.request(.setMuted(.n(2), true), requester: ":1.2")
        try f.request(.end(.n(1)), requester: ":1.50")
        try f.request(.end(.n(2)), requester: nil)
        #expect(f.log.performed.count == 3)
    }
}

@Suite struct StartFlowTests {
    @Test func startDialsConnectsAndTakesAudio() throws {
        let f = Fixture()
        let p = try f.register()
        f.log.clear()
        let h = Handle(type: .phoneNumber, value: "+15550100")
        let t = try f.request(.start(.n(1), handle: h, contactIdentifier: "c1"))
        #expect(f.log.trace == ["added:0000", "perform:1:start:0000"])
        let call = try #require(f.board.call(.n(1)))
        #expect(call.state == .dialing)
        #expect(call.outgoing)
        #expect(call.handle == h)
        #expect(call.startedAt == f.clock.now)
        #expect(t.actions[0].kind == .start(handle: h, video: false, contactIdentifier: "c1"))
        #expect(f.board.audioSessionHolder == nil)
        try f.fulfil("start", .n(1))
        // Fulfilling the start gives the provider the audio session; no published property changed.
        #expect(f.log.trace.suffix(2) == ["audio+1", "completed:ok"])
        f.clock.advance(by: 1)
        try f.board.reportOutgoingCallStartedConnecting(provider: p.id, uuid: .n(1), at: 0)
        #expect(f.board.call(.n(1))?.state == .connecting)
        #expect(f.board.call(.n(1))?.connectingAt == f.clock.now)
        f.clock.advance(by: 1)
        try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: 0)
        let connected = try #require(f.board.call(.n(1)))
        #expect(connected.state == .active)
        #expect(connected.hasConnected)
        #expect(connected.connectedAt == f.clock.now)
        #expect(f.log.audio == ["+1"])
        // Connected twice is not possible.
        expectErrorNamed("InvalidAction") { try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: 0) }
        expectErrorNamed("InvalidAction") { try f.board.reportOutgoingCallStartedConnecting(provider: p.id, uuid: .n(1), at: 0) }
    }

    @Test func outgoingReportsOnIncomingCallsAreInvalid() throws {
        let (f, p) = try Fixture.oneCall()
        expectErrorNamed("InvalidAction") { try f.board.reportOutgoingCallStartedConnecting(provider: p.id, uuid: .n(1), at: 0) }
        expectErrorNamed("InvalidAction") { try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: 0) }
        expectError(.unknownCallUUID(.n(2))) { try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(2), at: 0) }
        #expect(f.board.call(.n(1))?.state == .ringing)
    }

    @Test func connectedWithExplicitTime() throws {
        let f = Fixture()
        let p = try f.register()
        try f.request(.start(.n(1), handle: Handle(value: "bob")))
        let at = f.clock.now + 77
        try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: at)
        #expect(f.board.call(.n(1))?.connectedAt == at)
        #expect(f.board.call(.n(1))?.state == .active)
        #expect(f.board.audioSessionHolder == p.id) // Active: audio even before the start is fulfilled.
    }

    @Test func failedStartEndsTheCallFailed() throws {
        let f = Fixture()
        try f.register()
        try f.request(.start(.n(1), handle: Handle(value: "bob")))
        f.log.clear()
        try f.fail("start", .n(1))
        #expect(f.log.trace == ["changed:0000:ended", "removed:0000", "completed:ActionFailed"])
        #expect(f.log.removed.first?.endReason == .failed)
        #expect(f.board.calls.isEmpty)
    }

    @Test func timedOutStartEndsTheCallFailed() throws {
        let f = Fixture()
        try f.register()
        try f.request(.start(.n(1), handle: Handle(value: "bob")))
        f.clock.advance(by: 10)
        #expect(f.log.timedOut.map(\.kind.name) == ["start"])
        #expect(f.log.removed.first?.endReason == .failed)
        #expect(f.log.completions.first?.1?.name == "ActionTimedOut")
    }

    @Test func startRouting() throws {
        let f = Fixture()
        let h = Handle(type: .phoneNumber, value: "+1")
        // No provider at all.
        expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(1), handle: h)) }
        let phone = try f.register("Phone", owner: ":1.1") { $0.supportedHandleTypes = [.phoneNumber] }
        let mail = try f.register("Mail", owner: ":1.2") { $0.supportedHandleTypes = [.emailAddress]; $0.supportsVideo = true }
        // The one provider that fits.
        try f.request(.start(.n(1), handle: h))
        #expect(f.board.call(.n(1))?.provider == phone.id)
        try f.request(.start(.n(2), handle: Handle(type: .emailAddress, value: "a@b"), video: true))
        #expect(f.board.call(.n(2))?.provider == mail.id)
        #expect(f.board.call(.n(2))?.hasVideo == true)
        // None fits: generic handles, or video phone calls.
        let none = expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(3), handle: Handle(value: "x"))) }
        #expect(none?.message.contains("generic") == true)
        expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(3), handle: h, video: true)) }
        // Ambiguous.
        try f.register("Phone2", owner: ":1.3") { $0.supportedHandleTypes = [.phoneNumber] }
        let ambiguous = expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(3), handle: h)) }
        #expect(ambiguous?.message.contains("2 providers") == true)
        // The requester's own single provider wins, as does an explicit one.
        try f.request(.start(.n(3), handle: h), requester: ":1.3")
        #expect(f.board.call(.n(3))?.providerName == "Phone2")
        try f.request(.start(.n(4), handle: h, provider: phone.id))
        #expect(f.board.call(.n(4))?.provider == phone.id)
        // An unknown explicit provider.
        expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(5), handle: h, provider: 99)) }
    }

    @Test func startValidatesHandleAndVideoAgainstTheProvider() throws {
        let f = Fixture()
        let p = try f.register { $0.supportedHandleTypes = [.phoneNumber] }
        expectErrorNamed("InvalidArgs") { try f.request(.start(.n(1), handle: Handle(type: .phoneNumber, value: ""))) }
        expectErrorNamed("InvalidArgs") { try f.request(.start(.n(1), handle: Handle(type: .phoneNumber, value: String(repeating: "1", count: 1025)))) }
        expectErrorNamed("InvalidArgs") { try f.request(.start(.n(1), handle: Handle(type: .phoneNumber, value: "1"), contactIdentifier: String(repeating: "c", count: 1025))) }
        let type = expectErrorNamed("InvalidAction") { try f.request(.start(.n(1), handle: Handle(type: .emailAddress, value: "a@b"), provider: p.id)) }
        #expect(type?.message.contains("email-address") == true)
        let video = expectErrorNamed("InvalidAction") { try f.request(.start(.n(1), handle: Handle(type: .phoneNumber, value: "1"), video: true, provider: p.id)) }
        #expect(video?.message.contains("video") == true)
        #expect(f.board.calls.isEmpty)
    }

    @Test func actionsOnANewCallInTheSameTransaction() throws {
        let f = Fixture()
        try f.register()
        let t = try f.request(.start(.n(1), handle: Handle(value: "bob")), .setMuted(.n(1), true))
        #expect(t.actions.map(\.kind.name) == ["start", "set-muted"])
        try f.fulfil("start", .n(1))
        #expect(f.log.completions.isEmpty)
        try f.fulfil("set-muted", .n(1))
        #expect(f.board.call(.n(1))?.muted == true)
        #expect(f.log.completions.count == 1)
    }
}

@Suite("Times an app reports")
struct ReportedTimeTests {
    static let extremes: [UInt64] = [1, UInt64(Int64.max), UInt64(Int64.max) + 1, .max, 1 << 62]

    @Test("outside [the call's start, now + 60 s] is InvalidArgs naming the argument; nothing changes and a pending action stays pending")
    func outOfRange() throws {
        let f = Fixture()
        let p = try f.register()
        try f.request(.start(.n(1), handle: Handle(value: "bob")))
        let start = try #require(f.board.call(.n(1))?.startedAt)
        f.clock.advance(by: 5)  // less than the action timeout
        for time in Self.extremes + [start - 1, f.clock.now + 60_000_001] {
            let connecting = expectErrorNamed("InvalidArgs") { try f.board.reportOutgoingCallStartedConnecting(provider: p.id, uuid: .n(1), at: time) }
            #expect(connecting?.message.contains("at is \(time)") == true)
            let connected = expectErrorNamed("InvalidArgs") { try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: time) }
            #expect(connected?.message.contains("at is \(time)") == true)
            let fulfil = expectErrorNamed("InvalidArgs") { try f.fulfil("start", .n(1), at: time) }
            #expect(fulfil?.message.contains("Date is \(time)") == true)
            let ended = expectErrorNamed("InvalidArgs") { try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: time) }
            #expect(ended?.message.contains("ended_at is \(time)") == true)
        }
        #expect(f.board.call(.n(1))?.state == .dialing)
        #expect(f.pending("start", .n(1)) != nil, "a refused Date used up the action")
        // The bounds themselves are taken.
        try f.fulfil("start", .n(1), at: start)
        try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: f.clock.now + 60_000_000)
        try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: f.clock.now + 60_000_000)
        #expect(f.board.call(.n(1)) == nil)
    }
}
