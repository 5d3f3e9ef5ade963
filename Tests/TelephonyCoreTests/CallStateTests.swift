import Foundation
import Testing
@testable import TelephonyCore

/// A call's state is its one source of truth: `onHold` and `hasEnded` follow
/// it, and `move(to:at:reason:)` sets what goes with each change.
@Suite struct CallStateTests {
    static func call(outgoing: Bool) -> Call {
        Call(uuid: .n(1), provider: 1, providerName: "App", handle: Handle(value: "alice"), callerName: "",
             outgoing: outgoing, state: outgoing ? .dialing : .ringing, hasVideo: false, startedAt: 100)
    }

    @Test func outgoingCallThroughEveryState() {
        var call = Self.call(outgoing: true)
        call.move(to: .connecting, at: 200)
        #expect(call.connectingAt == 200 && call.connectedAt == 0 && !call.hasConnected)
        call.move(to: .active, at: 300)
        #expect(call.hasConnected && call.connectedAt == 300 && call.connectingAt == 200)
        call.move(to: .held, at: 400)
        #expect(call.onHold && call.state == .held && call.connectedAt == 300)
        call.move(to: .active, at: 500)
        #expect(!call.onHold && call.connectedAt == 300) // A resume is not a new connection.
        call.move(to: .held, at: 600)
        call.move(to: .ended, at: 700, reason: .remoteEnded)
        #expect(call.hasEnded && !call.onHold && call.hasConnected)
        #expect(call.endedAt == 700 && call.endReason == .remoteEnded)
    }

    @Test func outgoingCallConnectedWhileDialingStartedConnectingThen() {
        var call = Self.call(outgoing: true)
        call.move(to: .active, at: 300)
        #expect(call.connectingAt == 300 && call.connectedAt == 300)
    }

    @Test func answeredIncomingCallNeverConnecting() {
        var call = Self.call(outgoing: false)
        call.move(to: .active, at: 300)
        #expect(call.hasConnected && call.connectedAt == 300 && call.connectingAt == 0)
    }

    @Test func unansweredIncomingCallEndsWithoutConnecting() {
        var call = Self.call(outgoing: false)
        call.move(to: .ended, at: 300, reason: .unanswered)
        #expect(call.hasEnded && !call.hasConnected && call.connectedAt == 0 && call.endedAt == 300)
        #expect(call.endReason == .unanswered)
    }

    @Test func movingToTheSameStateChangesNothing() {
        var call = Self.call(outgoing: false)
        call.move(to: .active, at: 300)
        let before = call
        call.move(to: .active, at: 400)
        #expect(call == before)
    }

    @Test func everyStateButEndedCanEnd() {
        for state in CallState.allCases {
            let moves = Call.allowedMoves[state, default: []]
            #expect(moves.contains(.ended) == (state != .ended), "\(state)")
            #expect(!moves.contains(.ringing) && !moves.contains(.dialing), "\(state)")
        }
    }

    @Test func publishedCallsAgreeWithTheirState() throws {
        let (f, a, _) = try Fixture.activeAndRinging()
        try f.request(.answer(.n(2)))
        try f.fulfil("set-held", .n(1))
        try f.fulfil("answer", .n(2))
        #expect(f.board.call(.n(1))?.state == .held && f.board.call(.n(1))?.onHold == true)
        try f.board.reportCallEnded(provider: a.id, uuid: .n(1), reason: .remoteEnded, at: 0)
        let ended = try #require(f.log.removed.last)
        #expect(ended.state == .ended && ended.hasEnded && !ended.onHold && ended.endedAt == f.clock.now)
    }
}
