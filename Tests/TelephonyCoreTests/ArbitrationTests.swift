import Foundation
import Testing
@testable import TelephonyCore

@Suite struct ArbitrationTests {
    @Test func holdAndAnswerAcrossProviders() throws {
        let (f, a, b) = try Fixture.activeAndRinging()
        f.log.clear()
        let t = try f.request(.answer(.n(2)))
        #expect(t.actions.map(\.kind) == [.setHeld(true), .answer])
        #expect(t.actions.map(\.provider) == [a.id, b.id])
        #expect(t.actions[0].addedBySystem)
        #expect(!t.actions[1].addedBySystem)
        #expect(f.log.trace == ["perform:1:set-held:0000", "perform:2:answer:0000"])
        // Each fulfilled on its own; the transaction completes once, after both.
        try f.board.fulfillAction(provider: a.id, action: t.actions[0].id, at: 0)
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.board.call(.n(1))?.heldBySystemFor == .n(2))
        #expect(f.log.completions.isEmpty)
        try f.board.fulfillAction(provider: b.id, action: t.actions[1].id, at: 0)
        #expect(f.board.call(.n(2))?.state == .active)
        #expect(f.log.completions.count == 1)
        #expect(f.log.completions.first?.1 == nil)
        #expect(f.log.trace == [
            "perform:1:set-held:0000", "perform:2:answer:0000",
            "changed:0000:held", "audio-1", "changed:0000:active", "audio+2", "completed:ok",
        ])
        #expect(f.board.audioSessionHolder == b.id)
    }

    @Test func answerFulfilledBeforeHoldMovesAudioOnce() throws {
        let (f, a, b) = try Fixture.activeAndRinging()
        let t = try f.request(.answer(.n(2)))
        f.log.clear()
        try f.board.fulfillAction(provider: b.id, action: t.actions[1].id, at: 0)
        // The most recently active call's provider gets the session.
        #expect(f.log.audio == ["-1", "+2"])
        try f.board.fulfillAction(provider: a.id, action: t.actions[0].id, at: 0)
        #expect(f.log.audio == ["-1", "+2"])
        #expect(f.log.completions.count == 1)
    }

    @Test func failedHoldFailsTheTransactionOnceButTheAnswerStillApplies() throws {
        let (f, a, b) = try Fixture.activeAndRinging()
        let t = try f.request(.answer(.n(2)))
        f.log.clear()
        try f.board.failAction(provider: a.id, action: t.actions[0].id)
        #expect(f.log.completions.count == 1)
        #expect(f.log.completions.first?.1?.name == "ActionFailed")
        #expect(f.board.call(.n(1))?.state == .active)
        try f.board.fulfillAction(provider: b.id, action: t.actions[1].id, at: 0)
        #expect(f.board.call(.n(2))?.state == .active) // State changes, no second completion.
        #expect(f.log.completions.count == 1)
    }

    @Test func endInsteadOfHoldWhenTheActiveCallCannotHold() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1), CallUpdate(supportsHolding: false))
        try f.incoming(b, .n(2))
        let t = try f.request(.answer(.n(2)))
        #expect(t.actions.map(\.kind) == [.end, .answer])
        try f.fulfil("end", .n(1))
        #expect(f.board.call(.n(1)) == nil)
        #expect(f.log.removed.first?.endReason == nil)
        try f.fulfil("answer", .n(2))
        #expect(f.log.completions.last?.1 == nil)
    }

    @Test func startEndsADialingCallAndHoldsAnActiveOne() throws {
        let f = Fixture()
        let a = try f.register("A", owner: ":1.1")
        try f.register("B", owner: ":1.2")
        try f.activeIncoming(a, .n(1))
        try f.request(.start(.n(2), handle: Handle(value: "bob"), provider: 2))
        // n(1) got held; now a third call while n(2) is still dialing.
        #expect(f.pending("set-held", .n(1)) != nil)
        try f.fulfil("set-held", .n(1))
        let t = try f.request(.start(.n(3), handle: Handle(value: "carol"), provider: 2))
        #expect(t.actions.map(\.kind.name) == ["end", "start"])
        #expect(t.actions[0].callUUID == .n(2))
    }

    @Test func heldAndRingingCallsAreLeftAlone() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1))
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        try f.incoming(a, .n(3))
        try f.incoming(b, .n(2))
        let t = try f.request(.answer(.n(2)))
        #expect(t.actions.map(\.kind) == [.answer])
    }

    @Test func explicitEndAndAnswerAddsNothing() throws {
        let (f, _, _) = try Fixture.activeAndRinging()
        let t = try f.request(.end(.n(1)), .answer(.n(2)))
        #expect(t.actions.map(\.kind) == [.end, .answer])
    }
}

@Suite struct GroupTests {
    /// Provider with `groups` groups allowed; returns it.
    func provider(_ f: Fixture, groups: Int = 2, perGroup: Int = 5) throws -> Provider {
        try f.register("G") { $0.maximumCallGroups = groups; $0.maximumCallsPerCallGroup = perGroup }
    }

    func groupable(_ f: Fixture, _ p: Provider, _ uuid: UUID) throws {
        try f.activeIncoming(p, uuid, CallUpdate(supportsGrouping: true, supportsUngrouping: true))
    }

    @Test func answeringPastMaximumCallGroups() throws {
        let f = Fixture()
        let p = try provider(f)
        try f.activeIncoming(p, .n(1))          // group 1
        try f.activeIncoming(p, .n(2))          // n(1) held by the system, group 2
        #expect(f.board.call(.n(1))?.state == .held)
        try f.incoming(p, .n(3))
        f.log.clear()
        let error = expectErrorNamed("MaximumCallGroupsReached") { try f.request(.answer(.n(3))) }
        #expect(error?.message.contains("2 call groups") == true)
        #expect(error?.message.contains("3") == true)
        #expect(f.log.events.isEmpty)
        // End & answer fits.
        let t = try f.request(.end(.n(1)), .answer(.n(3)))
        #expect(t.actions.map(\.kind.name) == ["end", "set-held", "answer"])
        // Another provider's calls do not count.
        let other = try f.register("Other", owner: ":1.2")
        try f.incoming(other, .n(4))
        try f.request(.answer(.n(4)))
    }

    @Test func startCountsTheNewCallAsAGroup() throws {
        let f = Fixture()
        let p = try provider(f, groups: 1)
        try f.activeIncoming(p, .n(1))
        expectErrorNamed("MaximumCallGroupsReached") {
            try f.request(.start(.n(2), handle: Handle(value: "bob"), provider: p.id))
        }
        // Without holding, the active call is ended and the new call fits.
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate(supportsHolding: false))
        let t = try f.request(.start(.n(2), handle: Handle(value: "bob"), provider: p.id))
        #expect(t.actions.map(\.kind.name) == ["end", "start"])
    }

    @Test func pendingAnswersCountTowardTheLimit() throws {
        let f = Fixture()
        let p = try provider(f, groups: 1)
        try f.incoming(p, .n(1))
        try f.incoming(p, .n(2))
        try f.request(.answer(.n(1)))
        expectErrorNamed("MaximumCallGroupsReached") { try f.request(.answer(.n(2))) }
    }

    @Test func setGroupJoinsAndUngroupLeaves() throws {
        let f = Fixture()
        let p = try provider(f, groups: 3)
        try groupable(f, p, .n(1))
        try groupable(f, p, .n(2))
        try groupable(f, p, .n(3))
        f.log.clear()
        try f.request(.setGroup(.n(2), with: .n(1)))
        #expect(f.board.call(.n(2))?.group == nil) // Not before fulfilment.
        try f.fulfil("set-group", .n(2))
        #expect(f.board.call(.n(1))?.group == .n(1))
        #expect(f.board.call(.n(2))?.group == .n(1))
        #expect(f.log.changed.map(\.uuid) == [.n(1), .n(2)])
        // A third call joins the existing group, by naming any member.
        try f.request(.setGroup(.n(3), with: .n(2)))
        try f.fulfil("set-group", .n(3))
        #expect(f.board.calls.map(\.group) == [.n(1), .n(1), .n(1)])
        // Leaving: the others stay together.
        try f.request(.setGroup(.n(1), with: nil))
        try f.fulfil("set-group", .n(1))
        #expect(f.board.calls.map(\.group) == [nil, .n(1), .n(1)])
        // When only one call is left, its group dissolves too.
        try f.request(.setGroup(.n(3), with: nil))
        try f.fulfil("set-group", .n(3))
        #expect(f.board.calls.map(\.group) == [nil, nil, nil])
        #expect(f.log.completions.allSatisfy { $0.1 == nil })
    }

    @Test func endingAGroupMemberDissolvesAGroupOfTwo() throws {
        let f = Fixture()
        let p = try provider(f)
        try groupable(f, p, .n(1))
        try groupable(f, p, .n(2))
        try f.request(.setGroup(.n(1), with: .n(2)))
        try f.fulfil("set-group", .n(1))
        #expect(f.board.call(.n(1))?.group == .n(2))
        try f.board.reportCallEnded(provider: p.id, uuid: .n(2), reason: .remoteEnded, at: 0)
        #expect(f.board.call(.n(1))?.group == nil)
        #expect(f.log.removed.last?.group == .n(2))
    }

    @Test func groupSizeLimit() throws {
        let f = Fixture()
        let p = try provider(f, groups: 5, perGroup: 2)
        try groupable(f, p, .n(1))
        try groupable(f, p, .n(2))
        try groupable(f, p, .n(3))
        try f.request(.setGroup(.n(2), with: .n(1)))
        try f.fulfil("set-group", .n(2))
        let error = expectErrorNamed("MaximumCallGroupsReached") { try f.request(.setGroup(.n(3), with: .n(1))) }
        #expect(error?.message.contains("2 calls per call group") == true)
    }

    @Test func invalidGroupings() throws {
        let f = Fixture()
        let p = try provider(f, groups: 5)
        let other = try f.register("Other", owner: ":1.2") { $0.maximumCallGroups = 5 }
        try groupable(f, p, .n(1))
        try groupable(f, p, .n(2))
        try f.activeIncoming(p, .n(3)) // Does not support grouping or ungrouping.
        try f.activeIncoming(other, .n(4), CallUpdate(supportsGrouping: true))
        try f.incoming(p, .n(5), CallUpdate(supportsGrouping: true))
        let myself = expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(1), with: .n(1))) }
        #expect(myself?.message.contains("itself") == true)
        let foreign = expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(1), with: .n(4))) }
        #expect(foreign?.message.contains("another provider") == true)
        expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(3), with: .n(1))) }
        expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(1), with: .n(3))) }
        expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(1), with: .n(5))) } // Ringing.
        expectError(.unknownCallUUID(.n(9))) { try f.request(.setGroup(.n(1), with: .n(9))) }
        let alone = expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(1), with: nil)) }
        #expect(alone?.message.contains("not in a group") == true)
        // A call that cannot ungroup.
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(3), update: CallUpdate(supportsGrouping: true))
        try f.request(.setGroup(.n(3), with: .n(1)))
        try f.fulfil("set-group", .n(3))
        let ungroup = expectErrorNamed("InvalidAction") { try f.request(.setGroup(.n(3), with: nil)) }
        #expect(ungroup?.message.contains("ungrouping") == true)
        #expect(f.board.allPendingActions.isEmpty)
    }

    @Test func ungroupingPastMaximumCallGroups() throws {
        let f = Fixture()
        let p = try provider(f, groups: 2)
        try groupable(f, p, .n(1))
        try groupable(f, p, .n(2))
        try f.request(.setGroup(.n(2), with: .n(1)))
        try f.fulfil("set-group", .n(2))
        try groupable(f, p, .n(3)) // 2 groups: {1,2} and {3}
        try f.request(.setGroup(.n(3), with: .n(1)))
        try f.fulfil("set-group", .n(3)) // 1 group of three
        try f.incoming(p, .n(4))
        try f.request(.answer(.n(4)))
        try f.fulfil("answer", .n(4)) // 2 groups
        expectErrorNamed("MaximumCallGroupsReached") { try f.request(.setGroup(.n(1), with: nil)) }
    }
}

@Suite struct ArbitrationEdgeTests {
    @Test func aCallBeingResumedIsHeldAgainForANewAnswer() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1))
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        try f.request(.setHeld(.n(1), false)) // Resume pending.
        try f.incoming(b, .n(2))
        let t = try f.request(.answer(.n(2)))
        #expect(t.actions.map(\.kind) == [.setHeld(true), .answer])
        #expect(t.actions[0].callUUID == .n(1))
    }
}

/// Resuming brings a call up like answering does: a desktop has one microphone.
@Suite struct ResumeArbitrationTests {
    /// A's call held by the system for B's, which is active.
    static func heldForAnother() throws -> (Fixture, Provider, Provider) {
        let (f, a, b) = try Fixture.activeAndRinging()
        try f.request(.answer(.n(2)))
        try f.fulfil("set-held", .n(1))
        try f.fulfil("answer", .n(2))
        #expect(f.board.call(.n(1))?.state == .held)
        #expect(f.board.call(.n(2))?.state == .active)
        return (f, a, b)
    }

    @Test func resumingWhileAnotherAppsCallIsActiveHoldsThatCall() throws {
        let (f, a, b) = try Self.heldForAnother()
        f.log.clear()
        let t = try f.request(.setHeld(.n(1), false))
        #expect(t.actions.map(\.kind) == [.setHeld(true), .setHeld(false)])
        #expect(t.actions.map(\.callUUID) == [.n(2), .n(1)])
        #expect(t.actions.map(\.provider) == [b.id, a.id])
        #expect(t.actions[0].addedBySystem)
        try f.fulfil("set-held", .n(2))
        try f.fulfil("set-held", .n(1))
        #expect(f.board.call(.n(1))?.state == .active)
        #expect(f.board.call(.n(2))?.state == .held)
        #expect(f.board.calls.filter { $0.state == .active }.count == 1)
    }

    @Test func aSwapHoldsAndResumesWithoutAddingActions() throws {
        let (f, _, _) = try Self.heldForAnother()
        let t = try f.request(.setHeld(.n(2), true), .setHeld(.n(1), false))
        #expect(t.actions.map(\.kind) == [.setHeld(true), .setHeld(false)])
        #expect(!t.actions.contains { $0.addedBySystem })
    }

    @Test func theOtherCallIsEndedWhenItCannotHold() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.activeIncoming(a, .n(1))
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        try f.activeIncoming(b, .n(2), CallUpdate(supportsHolding: false))
        let t = try f.request(.setHeld(.n(1), false))
        #expect(t.actions.map(\.kind) == [.end, .setHeld(false)])
        #expect(t.actions[0].callUUID == .n(2))
    }

    @Test func resumingTwoCallsApartIsRefused() throws {
        let f = Fixture()
        let a = try f.register("A", owner: ":1.1")
        try f.activeIncoming(a, .n(1))
        try f.activeIncoming(a, .n(2))
        try f.request(.setHeld(.n(1), true), .setHeld(.n(2), true))
        try f.fulfil("set-held", .n(1))
        try f.fulfil("set-held", .n(2))
        expectErrorNamed("InvalidAction") { try f.request(.setHeld(.n(1), false), .setHeld(.n(2), false)) }
    }

    @Test func resumingWithNothingElseActiveAddsNothing() throws {
        let f = Fixture()
        let a = try f.register("A", owner: ":1.1")
        try f.activeIncoming(a, .n(1))
        try f.request(.setHeld(.n(1), true))
        try f.fulfil("set-held", .n(1))
        let t = try f.request(.setHeld(.n(1), false))
        #expect(t.actions.map(\.kind) == [.setHeld(false)])
    }
}

@Suite struct ModelTests {
    @Test func rawValuesMatchTheAPI() {
        #expect(HandleType.allCases.map(\.rawValue) == ["generic", "phone-number", "email-address"])
        #expect(CallState.allCases.map(\.rawValue) == ["ringing", "dialing", "connecting", "active", "held", "ended"])
        #expect(EndReason.allCases.map(\.rawValue) == ["failed", "remote-ended", "unanswered", "answered-elsewhere", "declined-elsewhere"])
        #expect(DTMFType.allCases.map(\.rawValue) == ["single-tone", "soft-pause", "hard-pause"])
        let kinds: [ActionKind] = [.start(handle: Handle(value: "x"), video: false, contactIdentifier: ""), .answer, .end,
                                   .setHeld(true), .setMuted(true), .setGroup(nil), .playDTMF(digits: "1", type: .singleTone)]
        #expect(kinds.map(\.name) == ["start", "answer", "end", "set-held", "set-muted", "set-group", "play-dtmf"])
    }

    @Test func providerIDsAndLowercasedUUIDs() {
        #expect(ProviderID(7) == 7)
        #expect(ProviderID(rawValue: 3).description == "3")
        #expect(ProviderID(1) < ProviderID(2))
        #expect(UUID.n(10).apiString == "0000000a-0000-4000-8000-000000000000")
    }
}
