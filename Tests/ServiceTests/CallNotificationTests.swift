import Foundation
import TelephonyCore
@testable import TelephonyService
import Testing

/// One call's notification as a state machine, and the one table of its buttons, on calls of a
/// real switchboard (no bus: the flows on screen are in NotificationTests and CallControlsTests).
@Suite("A call's notification: its phases and its buttons")
@TelephonyActor
struct CallNotificationTests {
    let switchboard = Switchboard(clock: ManualClock(now: 1_000_000), options: SwitchboardOptions())
    let provider: ProviderID

    init() throws {
        provider = try switchboard.registerProvider(owner: ":1.1", configuration: ProviderConfiguration(name: "Monkey")).id
    }

    func incoming(_ handle: String) throws -> UUID {
        let uuid = UUID()
        _ = try switchboard.reportNewIncomingCall(provider: provider, uuid: uuid, update: CallUpdate(handle: Handle(value: handle)))
        return uuid
    }

    func call(_ uuid: UUID) throws -> Call { try #require(switchboard.call(uuid)) }

    @Test("ringing, then ongoing under the same key, then Call ended; a call nobody answered ends missed under a key of its own")
    func phases() throws {
        let answered = try incoming("alice")
        let first = try call(answered)
        var notification = try #require(CallNotification(first))
        #expect(notification.phase == .ringing)
        let key = notification.key
        notification.dismissed()
        _ = try switchboard.requestTransaction([.answer(answered)], requester: nil)
        let action = try #require(switchboard.allPendingActions.first)
        try switchboard.fulfillAction(provider: provider, action: action.id, at: 1_000_000)
        let up = try call(answered)
        notification = try #require(CallNotification(up, following: notification))
        #expect(notification.phase == .ongoing && notification.key == key)
        #expect(notification.dismissals == 0, "a dismissal counts for the ringing only")
        var ended: Call?
        switchboard.onEvent = { if case .callRemoved(let call) = $0 { ended = call } }
        try switchboard.reportCallEnded(provider: provider, uuid: answered, reason: .remoteEnded, at: 1_000_000)
        let over = try #require(ended)
        notification = try #require(CallNotification(over, following: notification), "a call that connected leaves a card")
        #expect(notification.phase == .ended && notification.key == key)

        let unanswered = try incoming("bob")
        try switchboard.reportCallEnded(provider: provider, uuid: unanswered, reason: .unanswered, at: 1_000_000)
        let missedCall = try #require(ended)
        let missed = try #require(CallNotification(missedCall))
        #expect(missed.phase == .missed && missed.key == "missed-" + unanswered.apiString)

        let declined = try incoming("carol")
        _ = try switchboard.requestTransaction([.end(declined)], requester: nil)
        let end = try #require(switchboard.allPendingActions.first)
        try switchboard.fulfillAction(provider: provider, action: end.id, at: 1_000_000)
        let declinedCall = try #require(ended)
        #expect(declinedCall.uuid == declined)
        #expect(CallNotification(declinedCall) == nil, "a declined call leaves nothing")
        #expect(CallNotification(declinedCall, following: missed) == nil)
    }

    @Test("each phase shows only its own buttons, each with a label; what a ringing call's buttons do depends on the calls up")
    func buttons() throws {
        let ringing = try call(incoming("alice"))
        let card = try #require(CallNotification(ringing))
        func buttons(othersUp: [Call], ringtone: Bool) -> [String] {
            card.ringing(othersUp: othersUp, app: nil, servicePlaysRingtone: ringtone).actions.map(\.id)
        }
        #expect(buttons(othersUp: [], ringtone: false) == ["answer", "decline", "default"])
        #expect(buttons(othersUp: [], ringtone: true) == ["answer", "decline", "silence", "default"])
        // While a call is up, what GNOME Shell's three buttons must hold comes first.
        let up = try incoming("bob")
        #expect(buttons(othersUp: [try call(up)], ringtone: true) == ["hold-and-answer", "end-and-answer", "decline", "silence", "answer", "default"])
        try switchboard.reportCallUpdated(provider: provider, uuid: up, update: CallUpdate(supportsHolding: false))
        #expect(buttons(othersUp: [try call(up)], ringtone: false) == ["end-and-answer", "decline", "answer", "default"])
        // Dismissed once, it is posted again without Silence.
        var dismissed = card
        dismissed.dismissed()
        #expect(dismissed.ringing(othersUp: [], app: nil, servicePlaysRingtone: true).actions.map(\.id) == ["answer", "decline", "default"])
        #expect(CallNotification.Button.callBack.effect(on: ringing, opensApp: false, others: []) != .showApp)
        #expect(CallNotification.Button.body.effect(on: ringing, opensApp: true, others: []) == .showApp)
        // An app with no window: the Phone app's call window, else the click answers.
        #expect(CallNotification.Button.body.effect(on: ringing, opensApp: false, others: []) == .showCall(otherwise: [.answer(ringing.uuid)]))
        #expect(CallNotification.Button.ongoingBody.effect(on: ringing, opensApp: false, others: []) == .showCall(otherwise: []))
        // The ongoing card's last button: the app's window, else the Phone app's call window.
        let ongoing = try #require(CallNotification(call(up)))
        #expect(ongoing.ongoing(app: nil).actions.last?.id == "default")
        let monkey = ProviderConfiguration(name: "Monkey", desktopEntry: "org.example.Monkey")
        #expect(ongoing.ongoing(app: monkey).actions.last?.id == "show-app")
        // End & Answer ends the call that is up, not one already on hold (End(old), Answer(new)).
        let held = try incoming("dora")
        for request in [ActionRequest.answer(held), .setHeld(held, true), .answer(up)] {
            _ = try switchboard.requestTransaction([request], requester: nil)
            while let pending = switchboard.allPendingActions.first {
                try switchboard.fulfillAction(provider: provider, action: pending.id, at: 1_000_000)
            }
        }
        let others = [try call(up), try call(held)]
        #expect(try call(held).state == .held && call(up).state == .active)
        #expect(CallNotification.Button.endAndAnswer.effect(on: ringing, opensApp: false, others: others)
            == .transaction([.end(up), .answer(ringing.uuid)]))
        // One action id per phase: both bodies are the server's "default".
        #expect(CallNotification.Button.byAction[.ringing]?["default"] == .body)
        #expect(CallNotification.Button.byAction[.ongoing]?["default"] == .ongoingBody)
        #expect(CallNotification.Button.byAction[.missed]?["default"] == nil)
        #expect(CallNotification.Button.byAction.values.map(\.count).reduce(0, +) == CallNotification.Button.allCases.count)
        #expect(CallNotification.Button.body.label(for: ringing, opensApp: true) == "Open Monkey")
        for button in CallNotification.Button.allCases {
            #expect(!button.label(for: ringing, opensApp: false).isEmpty)
        }
        let phases = Dictionary(grouping: CallNotification.Button.allCases, by: \.phase)
        #expect(Set(phases.keys) == [.ringing, .ongoing, .missed])
        let ongoingIDs = Set(phases[.ongoing]!.map(\.id))
        #expect(Set(ongoing.ongoing(app: monkey).actions.map(\.id)).isSubset(of: ongoingIDs))
    }

    @Test("a fair share: every app's oldest call first, the choice kept as calls come and go")
    func fairShare() throws {
        let sip = try switchboard.registerProvider(owner: ":1.2", configuration: ProviderConfiguration(name: "SIP")).id
        func incoming(_ handle: String, on provider: ProviderID) throws -> Call {
            let uuid = UUID()
            _ = try switchboard.reportNewIncomingCall(provider: provider, uuid: uuid, update: CallUpdate(handle: Handle(value: handle)))
            return try call(uuid)
        }
        let (first, second, other) = (try incoming("alice", on: provider), try incoming("bob", on: provider), try incoming("carol", on: sip))
        var share = FairShare(limit: 2)
        share.update(first, waiting: true)
        share.update(second, waiting: true)
        #expect(share.chosen == [first.uuid, second.uuid])
        // A third call, of another app: each app's oldest first.
        share.update(other, waiting: true)
        #expect(share.chosen == [first.uuid, other.uuid])
        #expect(share.leftOut { $0 == other.uuid ? "SIP" : "Monkey" } == "Monkey: 1")
        share.update(second, waiting: true)
        #expect(share.count == 3, "a call already waiting is not added again")
        share.update(first, waiting: false)
        #expect(share.chosen == [second.uuid, other.uuid])
        share.update(first, waiting: false)
        #expect(share.count == 2)
    }
}
