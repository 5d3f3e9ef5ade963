import Foundation
import Testing
@testable import TelephonyCore

@Suite struct IncomingCallTests {
    @Test func incomingCallRings() throws {
        let f = Fixture()
        let p = try f.register()
        f.log.clear()
        let call = try f.incoming(p, .n(1), CallUpdate(handle: Handle(type: .phoneNumber, value: "+4420"), localizedCallerName: "Ada", hasVideo: true))
        #expect(call.state == .ringing)
        #expect(!call.outgoing)
        #expect(call.startedAt == f.clock.now)
        #expect(call.callerName == "Ada")
        #expect(call.handle == Handle(type: .phoneNumber, value: "+4420"))
        #expect(call.hasVideo)
        #expect(call.supportsHolding && call.supportsDTMF && !call.supportsGrouping && !call.supportsUngrouping)
        #expect(call.providerName == "App")
        #expect(f.log.trace == ["added:0000"])
        #expect(f.board.calls.map(\.uuid) == [.n(1)])
        #expect(f.board.provider(p.id)?.callUUIDs == [.n(1)])
        #expect(f.board.audioSessionHolder == nil)
    }

    @Test func duplicateUUIDIsRefusedAcrossProviders() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.incoming(a, .n(1))
        expectError(.callUUIDAlreadyExists(.n(1))) { try f.incoming(a, .n(1)) }
        expectError(.callUUIDAlreadyExists(.n(1))) { try f.incoming(b, .n(1)) }
        // Same UUID in the other letter case is the same UUID.
        let upper = try #require(UUID(uuidString: UUID.n(1).uuidString.uppercased()))
        expectError(.callUUIDAlreadyExists(.n(1))) { try f.incoming(b, upper) }
        #expect(f.board.calls.count == 1)
    }

    @Test func validatesHandleAndCallerName() throws {
        let f = Fixture()
        let p = try f.register { $0.supportedHandleTypes = [.phoneNumber] }
        let long = String(repeating: "9", count: 1025)
        expectErrorNamed("InvalidArgs") { try f.incoming(p, .n(1), handle: long) }
        expectErrorNamed("InvalidArgs") {
            try f.incoming(p, .n(1), CallUpdate(localizedCallerName: String(repeating: "ü", count: 513)))
        }
        let typeError = expectErrorNamed("InvalidArgs") {
            try f.incoming(p, .n(1), CallUpdate(handle: Handle(type: .emailAddress, value: "a@b")))
        }
        #expect(typeError?.message.contains("email-address") == true)
        try f.incoming(p, .n(1), handle: String(repeating: "9", count: 1024))
        #expect(f.board.calls.count == 1)
    }

    @Test func unknownProviderIsRefused() throws {
        let f = Fixture()
        expectErrorNamed("UnknownCallProvider") {
            _ = try f.board.reportNewIncomingCall(provider: 7, uuid: .n(1), update: CallUpdate())
        }
    }

    @Test func perProviderCallAndRingingLimits() throws {
        let f = Fixture(options: .init(limits: .with { $0.maximumCallsPerProvider = 3; $0.maximumRingingCallsPerApp = 2 }))
        let p = try f.register()
        let other = try f.register("Other", owner: ":1.2")
        try f.incoming(p, .n(1))
        try f.incoming(p, .n(2))
        let ringing = expectErrorNamed("LimitsExceeded") { try f.incoming(p, .n(3)) }
        #expect(ringing?.message.contains("ringing") == true)
        try f.incoming(other, .n(3)) // Per provider: the other provider is not affected.
        // Answer one: 1 ringing + 1 active, room for a third call but not a fourth.
        try f.request(.answer(.n(1)))
        try f.fulfil("answer", .n(1))
        try f.incoming(p, .n(4))
        let live = expectErrorNamed("LimitsExceeded") { try f.incoming(p, .n(5)) }
        #expect(live?.message.contains("3 calls") == true)
    }

    @Test func partialUpdateChangesOnlyPresentKeys() throws {
        let f = Fixture()
        let p = try f.register()
        try f.incoming(p, .n(1), CallUpdate(localizedCallerName: "Ada"))
        f.log.clear()
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate(supportsHolding: false))
        let call = try #require(f.board.call(.n(1)))
        #expect(call.callerName == "Ada")
        #expect(call.handle.value == "+15551234")
        #expect(!call.supportsHolding)
        #expect(call.supportsDTMF)
        #expect(f.log.changed.count == 1)
        // Nothing new: no event.
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate(localizedCallerName: "Ada", supportsHolding: false))
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate())
        #expect(f.log.changed.count == 1)
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate(handle: Handle(type: .emailAddress, value: "ada@x"), hasVideo: true))
        #expect(f.log.changed.last?.handle == Handle(type: .emailAddress, value: "ada@x"))
        #expect(f.log.changed.last?.hasVideo == true)
        #expect(f.log.changed.last?.callerName == "Ada")
        expectErrorNamed("InvalidArgs") {
            try f.board.reportCallUpdated(provider: p.id, uuid: .n(1), update: CallUpdate(localizedCallerName: String(repeating: "x", count: 1025)))
        }
        expectError(.unknownCallUUID(.n(9))) {
            try f.board.reportCallUpdated(provider: p.id, uuid: .n(9), update: CallUpdate())
        }
    }

    @Test func providerActsOnlyOnItsOwnCalls() throws {
        let (f, a, b) = try Fixture.twoApps()
        try f.incoming(a, .n(1))
        expectError(.unknownCallUUID(.n(1))) { try f.board.reportCallUpdated(provider: b.id, uuid: .n(1), update: CallUpdate(localizedCallerName: "x")) }
        expectError(.unknownCallUUID(.n(1))) { try f.board.reportCallEnded(provider: b.id, uuid: .n(1), reason: .remoteEnded, at: 0) }
        expectError(.unknownCallUUID(.n(1))) { try f.board.reportOutgoingCallConnected(provider: b.id, uuid: .n(1), at: 0) }
        try f.request(.answer(.n(1)))
        let answer = try #require(f.pending("answer", .n(1)))
        expectError(.unknownAction(answer.id)) { try f.board.fulfillAction(provider: b.id, action: answer.id, at: 0) }
        expectError(.unknownAction(answer.id)) { try f.board.failAction(provider: b.id, action: answer.id) }
        #expect(f.board.call(.n(1))?.state == .ringing)
        #expect(f.board.call(.n(1))?.callerName == "")
    }

    @Test func reportCallEndedEndsAndForgetsTheCall() throws {
        let (f, p) = try Fixture.oneCall()
        f.log.clear()
        f.clock.advance(by: 3)
        let at = f.clock.now - 123  // a moment ago, after the call started
        try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .answeredElsewhere, at: at)
        #expect(f.log.trace == ["changed:0000:ended", "removed:0000"])
        let ended = try #require(f.log.removed.first)
        #expect(ended.hasEnded)
        #expect(ended.endReason == .answeredElsewhere)
        #expect(ended.endedAt == at)
        #expect(f.board.call(.n(1)) == nil)
        #expect(f.board.provider(p.id)?.callUUIDs == [])
        // The ring timeout was cancelled: nothing happens at 45 s.
        f.log.clear()
        f.clock.advance(by: 60)
        #expect(f.log.events.isEmpty)
        // The UUID may be used again.
        try f.incoming(p, .n(1))
        // at == 0 means now.
        try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: 0)
        #expect(f.log.removed.last?.endedAt == f.clock.now)
        expectError(.unknownCallUUID(.n(1))) { try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .failed, at: 0) }
    }

    @Test func reportCallEndedSettlesPendingActions() throws {
        let (f, p) = try Fixture.oneCall()
        try f.incoming(p, .n(2))
        let end = try f.request(.end(.n(1)))
        let answer = try f.request(.answer(.n(2)))
        f.log.clear()
        try f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: 0)
        try f.board.reportCallEnded(provider: p.id, uuid: .n(2), reason: .declinedElsewhere, at: 0)
        let completions = f.log.completions
        #expect(completions.count == 2)
        #expect(completions[0].0.id == end.id)
        #expect(completions[0].1 == nil) // A pending end counts as fulfilled.
        #expect(completions[1].0.id == answer.id)
        #expect(completions[1].1 == .actionFailed("The answer action on call \(UUID.n(2).apiString) did not happen: the call ended."))
        #expect(f.log.removed.map(\.endReason) == [.remoteEnded, .declinedElsewhere])
        #expect(f.board.allPendingActions.isEmpty)
        #expect(f.board.transaction(end.id) == nil)
    }
}

@Suite struct RingTimeoutTests {
    @Test func unansweredCallGetsSystemEndAndEndsUnanswered() throws {
        let (f, p) = try Fixture.oneCall()
        f.log.clear()
        f.clock.advance(by: 44.9)
        #expect(f.log.events.isEmpty)
        f.clock.advance(by: 0.1)
        let end = try #require(f.log.performed.first)
        #expect(f.log.trace == ["perform:1:end:0000"])
        #expect(end.kind == .end)
        #expect(end.addedBySystem)
        #expect(f.board.transaction(end.transactionID)?.requester == nil)
        #expect(f.board.call(.n(1))?.state == .ringing) // Ends when the provider fulfils.
        try f.board.fulfillAction(provider: p.id, action: end.id, at: 0)
        #expect(f.log.trace.suffix(3) == ["changed:0000:ended", "removed:0000", "completed:ok"])
        let ended = try #require(f.log.removed.first)
        #expect(ended.endReason == .unanswered)
        #expect(ended.endedAt == f.clock.now)
        #expect(f.log.completions.first?.0.requester == nil)
    }

    @Test func ringTimeoutEndThatTimesOutStillEndsUnanswered() throws {
        let (f, _) = try Fixture.oneCall()
        f.clock.advance(by: 45)
        f.log.clear()
        f.clock.advance(by: 10)
        #expect(f.log.trace == ["timeout:1:end:0000", "changed:0000:ended", "removed:0000", "completed:ActionTimedOut"])
        #expect(f.log.removed.first?.endReason == .unanswered)
    }

    @Test func ringTimeoutEndThatFailsStillEndsUnanswered() throws {
        let (f, _) = try Fixture.oneCall()
        f.clock.advance(by: 45)
        try f.fail("end", .n(1))
        #expect(f.log.removed.first?.endReason == .unanswered)
        #expect(f.log.completions.first?.1?.name == "ActionFailed")
    }

    @Test func answeredCallIsNotEndedByTheRingTimeout() throws {
        let (f, _) = try Fixture.oneCall()
        f.clock.advance(by: 30)
        try f.request(.answer(.n(1)))
        try f.fulfil("answer", .n(1))
        f.log.clear()
        f.clock.advance(by: 100)
        #expect(f.log.events.isEmpty)
        #expect(f.board.call(.n(1))?.state == .active)
    }

    @Test func callBeingAnsweredAtTheRingTimeoutIsNotEnded() throws {
        let (f, _) = try Fixture.oneCall()
        f.clock.advance(by: 40)
        try f.request(.answer(.n(1)))
        f.log.clear()
        f.clock.advance(by: 5) // Ring timeout while the answer is pending.
        #expect(f.log.performed.isEmpty)
        try f.fulfil("answer", .n(1))
        #expect(f.board.call(.n(1))?.state == .active)
    }

    @Test func ringTimeoutIsConfigurable() throws {
        let f = Fixture(options: .init(ringTimeout: 5))
        let p = try f.register()
        try f.incoming(p, .n(1))
        f.clock.advance(by: 4.99)
        #expect(f.log.performed.isEmpty)
        f.clock.advance(by: 0.01)
        #expect(f.log.performed.map(\.kind) == [.end])
    }

    @Test("a report is one operation: screening names the caller once and decides; a refused call is announced as refused (for Recents), never added; a ringing one carries the screened name, named again only when its handle or name changes or the user's names do")
    func screenedReport() throws {
        let f = Fixture()
        let p = try f.register()
        let screening = RefusingScreening(verdict: .silenced)
        f.board.screening = screening
        f.log.clear()
        _ = expectErrorNamed("FilteredByDoNotDisturb") { try f.incoming(p, .n(1), handle: "bob") }
        #expect(f.log.added.isEmpty && f.board.call(.n(1)) == nil)
        #expect(f.log.refused.map { "\($0.uuid == .n(1)) \($0.displayName) \($0.status.rawValue)" } == ["true screened bob missed"])

        let ringing = RefusingScreening(verdict: .ring)
        f.board.screening = ringing
        let call = try f.incoming(p, .n(2), handle: "carol")
        #expect(call.displayName == "screened carol" && f.log.added.map(\.displayName) == ["screened carol"])
        f.log.clear()
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(2), update: CallUpdate(hasVideo: true))
        #expect(f.log.changed.map(\.displayName) == ["screened carol"])
        try f.board.reportCallUpdated(provider: p.id, uuid: .n(2), update: CallUpdate(handle: Handle(value: "dave")))
        #expect(f.log.changed.last?.displayName == "named dave")
        f.log.clear()
        f.board.renameCallers()
        #expect(f.log.events.isEmpty, "nothing renamed, nothing announced")
    }

    @Test("a UUID in the API's form, written from its bytes, is Foundation's uuidString in lower case")
    func uuidText() {
        for uuid in (0..<1000).map({ _ in UUID() }) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                                                        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))] {
            #expect(uuid.apiString == uuid.uuidString.lowercased())
        }
    }
}
