import Foundation
import Testing
@testable import TelephonyCore

@Suite struct ProviderLifecycleTests {
    @Test func vanishingProviderEndsItsCallsAndResumesTheHeldCall() throws {
        let (f, a, b) = try Fixture.activeAndRinging()
        try f.request(.answer(.n(2)))
        try f.fulfil("set-held", .n(1))
        try f.fulfil("answer", .n(2))
        try f.incoming(b, .n(3))
        #expect(f.board.call(.n(1))?.heldBySystemFor == .n(2))
        f.log.clear()

        f.board.ownerVanished(":1.2")
        #expect(f.log.trace == [
            "changed:0000:ended", "audio-2", "removed:0000",
            "changed:0000:ended", "removed:0000",
            "removed-provider:2",
            "perform:1:set-held:0000",
        ])
        #expect(f.log.removed.map(\.uuid) == [.n(2), .n(3)])
        #expect(f.log.removed.allSatisfy { $0.endReason == .failed && $0.hasEnded && $0.state == .ended })
        #expect(f.board.provider(b.id) == nil)
        // A's call is untouched until the system's resume is fulfilled.
        let resume = try #require(f.log.performed.last)
        #expect(resume.kind == .setHeld(false))
        #expect(resume.addedBySystem)
        #expect(f.board.transaction(resume.transactionID)?.requester == nil)
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.board.call(.n(1))?.heldBySystemFor == nil)
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .active)
        #expect(f.board.audioSessionHolder == a.id)
    }

    @Test func heldCallIsNotResumedWhenAnotherCallIsActive() throws {
        let (f, a, b) = try Fixture.twoApps()
        let c = try f.register("C", owner: ":1.3")
        try f.activeIncoming(a, .n(1))
        try f.incoming(b, .n(2))
        try f.request(.answer(.n(2)))
        try f.fulfil("set-held", .n(1))
        try f.fulfil("answer", .n(2))
        // A third provider's call, answered while B's call stays active (B's call ends instead).
        try f.board.reportCallUpdated(provider: b.id, uuid: .n(2), update: CallUpdate(supportsHolding: false))
        try f.incoming(c, .n(3))
        try f.request(.answer(.n(3)))
        try f.fulfil("answer", .n(3))
        #expect(f.board.call(.n(2))?.state == .active) // Its end is still pending.
        f.log.clear()
        f.board.invalidateProvider(b.id)
        #expect(f.log.performed.isEmpty) // n(3) is active: n(1) stays held.
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.log.completions.count == 1) // The pending end was dropped; that transaction fails.
        #expect(f.log.completions.first?.1?.name == "ActionFailed")
    }

    @Test func pendingActionsOfAVanishedProviderFailTheirTransactions() throws {
        let (f, _, b) = try Fixture.activeAndRinging()
        let t = try f.request(.answer(.n(2)))
        f.log.clear()
        f.board.invalidateProvider(b.id)
        // The answer was dropped: the transaction fails at once, only once.
        #expect(f.log.completions.count == 1)
        #expect(f.log.completions.first?.0.id == t.id)
        #expect(f.log.completions.first?.1?.message.contains("went away") == true)
        // A's hold is still pending and still applies when fulfilled, without a second completion.
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.log.completions.count == 1)
        // The dropped answer's timer never fires.
        f.clock.advance(by: 60)
        #expect(f.log.timedOut.isEmpty)
    }

    @Test func removedProviderIdIsUnknownEverywhere() throws {
        let (f, p) = try Fixture.oneCall()
        try f.request(.end(.n(1)))
        let end = try #require(f.pending("end", .n(1)))
        f.board.invalidateProvider(p.id)
        #expect(f.log.trace.suffix(4) == ["completed:ActionFailed", "changed:0000:ended", "removed:0000", "removed-provider:1"])
        expectErrorNamed("UnknownCallProvider") { _ = try f.board.reportNewIncomingCall(provider: p.id, uuid: .n(2), update: CallUpdate()) }
        expectErrorNamed("UnknownCallProvider") { try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate()) }
        expectErrorNamed("UnknownCallProvider") { try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .failed, at: 0) }
        expectErrorNamed("UnknownCallProvider") { try f.board.reportOutgoingCallStartedConnecting(provider: p.id, uuid: .n(1), at: 0) }
        expectErrorNamed("UnknownCallProvider") { try f.board.reportOutgoingCallConnected(provider: p.id, uuid: .n(1), at: 0) }
        expectErrorNamed("UnknownCallProvider") { try f.board.fulfillAction(provider: p.id, action: end.id, at: 0) }
        expectErrorNamed("UnknownCallProvider") { try f.board.failAction(provider: p.id, action: end.id) }
        expectErrorNamed("UnknownCallProvider") { try f.request(.start(.n(2), handle: Handle(value: "x"), provider: p.id)) }
        // The ring timeout was cancelled; ids are not reused; invalidating twice is harmless.
        f.log.clear()
        f.clock.advance(by: 100)
        f.board.invalidateProvider(p.id)
        #expect(f.log.events.isEmpty)
        #expect(try f.register().id == 2)
    }

    @Test func ownerVanishedInvalidatesEveryProviderItOwns() throws {
        let f = Fixture()
        let a = try f.register("A", owner: ":1.1")
        let b = try f.register("B", owner: ":1.1")
        let c = try f.register("C", owner: ":1.2")
        try f.incoming(a, .n(1))
        try f.incoming(b, .n(2))
        try f.incoming(c, .n(3))
        f.log.clear()
        f.board.ownerVanished(":1.1")
        #expect(f.log.trace == ["changed:0000:ended", "removed:0000", "removed-provider:1",
                                "changed:0000:ended", "removed:0000", "removed-provider:2"])
        #expect(f.board.orderedProviders.map(\.id) == [c.id])
        #expect(f.board.calls.map(\.uuid) == [.n(3)])
        f.board.ownerVanished(":1.404")
        #expect(f.log.events.count == 6)
    }

    @Test func failedAnswerResumesTheCallHeldForIt() throws {
        let (f, _, _) = try Fixture.activeAndRinging()
        try f.request(.answer(.n(2)))
        try f.fulfil("set-held", .n(1))
        f.log.clear()
        f.clock.advance(by: 10) // The answer times out: n(2) ends failed.
        #expect(f.log.trace == [
            "timeout:2:answer:0000", "changed:0000:ended", "removed:0000", "completed:ActionTimedOut",
            "perform:1:set-held:0000",
        ])
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .active)
    }

    @Test func remoteEndDoesNotResumeAutomatically() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1))
        try f.activeIncoming(b, .n(2))
        f.log.clear()
        try f.board.reportCallEnded(provider: b.id, uuid: .n(2), reason: .remoteEnded, at: 0)
        #expect(f.log.performed.isEmpty)
        #expect(f.board.call(.n(1))?.state == .held)
    }
}

@Suite struct AudioSessionTests {
    @Test func oneHolderAtATimeMostRecentWins() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1))
        #expect(f.log.audio == ["+1"])
        // B starts a call; A's is held by the system; B's start fulfilled takes the audio.
        try f.request(.start(.n(2), handle: Handle(value: "x"), provider: b.id))
        try f.fulfil("start", .n(2))
        #expect(f.log.audio == ["+1", "-1", "+2"])
        try f.fulfil("set-held", .n(1))
        #expect(f.log.audio == ["+1", "-1", "+2"])
        // Resuming A while B is still up: A's call is the most recent, A takes it.
        try f.request(.setHeld(.n(1), false))
        try f.fulfil("set-held", .n(1))
        #expect(f.log.audio == ["+1", "-1", "+2", "-2", "+1"])
        #expect(f.board.audioSessionHolder == a.id)
        // A's call ends: B's call still qualifies and gets it back.
        try f.board.reportCallEnded(provider: a.id, uuid: .n(1), reason: .remoteEnded, at: 0)
        #expect(f.log.audio == ["+1", "-1", "+2", "-2", "+1", "-1", "+2"])
        try f.board.reportCallEnded(provider: b.id, uuid: .n(2), reason: .remoteEnded, at: 0)
        #expect(f.log.audio.last == "-2")
        #expect(f.board.audioSessionHolder == nil)
    }

    @Test func sameProviderKeepsTheSessionWhileOneOfItsCallsQualifies() throws {
        let (f, p) = try Fixture.oneCall(answered: true)
        try f.incoming(p, .n(2))
        try f.request(.answer(.n(2)))
        try f.fulfil("answer", .n(2)) // Both active for a moment: same provider, no transition.
        try f.fulfil("set-held", .n(1))
        #expect(f.log.audio == ["+1"])
        #expect(f.board.call(.n(1))?.state == .held)
        // Held first, then answered: for a moment no call qualifies, so the session drops and returns.
        try f.incoming(p, .n(3))
        try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: 0)
        try f.request(.answer(.n(3)))
        try f.fulfil("set-held", .n(2))
        try f.fulfil("answer", .n(3))
        #expect(f.log.audio == ["+1", "-1", "+1"])
    }
}

@Suite struct InvalidationGroupTests {
    @Test func invalidatingAProviderWithAGroupEndsEachCallOnce() throws {
        let f = Fixture()
        let p = try f.register()
        try f.activeIncoming(p, .n(1), CallUpdate(supportsGrouping: true))
        try f.activeIncoming(p, .n(2), CallUpdate(supportsGrouping: true))
        try f.request(.setGroup(.n(2), with: .n(1)))
        try f.fulfil("set-group", .n(2))
        f.log.clear()
        f.board.invalidateProvider(p.id)
        #expect(f.log.trace == ["changed:0000:ended", "removed:0000", "changed:0000:ended", "audio-1", "removed:0000", "removed-provider:1"])
        #expect(f.log.removed.allSatisfy { $0.group == .n(1) })
    }
}
