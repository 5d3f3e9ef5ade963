import Foundation
import Testing
@testable import TelephonyCore

/// The switchboard tells of an operation once it is complete: an observer that reads the
/// switchboard while told sees the calls as the operation left them, not halfway.
@Suite("Events come after the operation")
struct EventTimingTests {
    @Test("a call's end is told once the audio session has moved on: the observer reads no stale holder")
    func endToldAfterTheAudioSessionMoved() throws {
        let (f, _) = try Fixture.oneCall(answered: true)
        var holderWhenToldOfTheEnd: ProviderID?? = .none
        f.board.onEvent = { event in
            if case .callChanged(let call) = event, call.hasEnded { holderWhenToldOfTheEnd = .some(f.board.audioSessionHolder) }
        }
        try f.board.reportCallEnded(provider: f.board.calls[0].provider, uuid: .n(1), reason: .remoteEnded, at: 0)
        // Told mid-operation (before), the holder was still the ended call's provider.
        #expect(holderWhenToldOfTheEnd == .some(nil))
    }

    @Test("answering a call that holds another: every event of the transaction comes after all of it is dispatched, in order")
    func orderKept() throws {
        let (f, _, _) = try Fixture.activeAndRinging()
        f.log.clear()
        var pendingWhenTold: [Int] = []
        let log = f.log
        f.board.onEvent = { event in
            log.events.append(event)
            if case .performAction = event { pendingWhenTold.append(f.board.allPendingActions.count) }
        }
        try f.request(.answer(.n(2)))
        #expect(log.performed.map(\.kind.name) == ["set-held", "answer"])
        #expect(pendingWhenTold == [2, 2])
    }

    @Test("an observer's own operation, started while told of another, is told after it")
    func nested() throws {
        let (f, p) = try Fixture.oneCall()
        var told: [String] = []
        f.board.onEvent = { event in
            switch event {
            case .callAdded(let call):
                told.append("added \(call.uuid == .n(2) ? 2 : 1)")
                if call.uuid == .n(2) { _ = try? f.board.reportCallEnded(provider: p.id, uuid: .n(1), reason: .remoteEnded, at: 0) }
            case .callRemoved(let call): told.append("removed \(call.uuid == .n(2) ? 2 : 1)")
            default: break
            }
        }
        try f.incoming(p, .n(2))
        #expect(told == ["added 2", "removed 1"])
        #expect(f.board.calls.map(\.uuid) == [.n(2)])
    }
}
