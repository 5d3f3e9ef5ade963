import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
@testable import MonkeyCallKit
import Testing

@Suite("MonkeyCallKit against the service: every delegate callback")
struct ProviderCallbackTests {
    @Test("incoming call: reported, answered, ended; audio activated and deactivated; callbacks on the chosen queue")
    func incomingAnsweredEnded() async throws {
        let fixture = try await KitFixture()
        let queue = DispatchQueue(label: "app")
        let (provider, delegate) = try await fixture.provider(queue: queue)
        let controller = try fixture.controller()
        let uuid = UUID()
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .phoneNumber, value: "+14085555555")
        update.localizedCallerName = "Alice"
        try await provider.reportNewIncomingCall(with: uuid, update: update)
        #expect(await fixture.state(uuid) == "ringing")
        #expect(try await fixture.callProperty(uuid, "CallerName") == .string("Alice"))
        #expect(try await fixture.callProperty(uuid, "HandleType") == .string("phone-number"))

        let answer = CXAnswerCallAction(call: uuid)
        let transaction = CXTransaction(action: answer)
        try await controller.request(transaction)
        let performed = try #require(await delegate.next(CXAnswerCallAction.self))
        #expect(performed.callUUID == uuid)
        #expect(performed.isComplete)
        #expect(await delegate.waitFor("activated"))
        #expect(await fixture.state(uuid) == "active")

        try await controller.requestTransaction(with: CXEndCallAction(call: uuid))
        let end = try #require(await delegate.next(CXEndCallAction.self))
        #expect(end.callUUID == uuid)
        #expect(await delegate.waitFor("deactivated"))
        #expect(delegate.wrongQueue == 0)
        #expect(provider.pendingTransactions.isEmpty)
    }

    @Test("outgoing call: start with its fields, connecting, connected; held, muted, DTMF reach the delegate")
    func outgoingAndCallActions() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider { $0.supportsVideo = true }
        let controller = try fixture.controller()
        let uuid = UUID()
        let start = CXStartCallAction(call: uuid, handle: CXHandle(type: .emailAddress, value: "carol@example.org"))
        start.isVideo = true
        start.contactIdentifier = "contact-7"
        try await controller.requestTransaction(with: start)
        let started = try #require(await delegate.next(CXStartCallAction.self))
        #expect(started.callUUID == uuid)
        #expect(started.handle == CXHandle(type: .emailAddress, value: "carol@example.org"))
        #expect(started.isVideo)
        #expect(started.contactIdentifier == "contact-7")
        #expect(await delegate.waitFor("activated"))

        provider.reportOutgoingCall(with: uuid, startedConnectingAt: nil)
        provider.reportOutgoingCall(with: uuid, connectedAt: Date())
        let update = CXCallUpdate()
        update.localizedCallerName = "Carol"
        provider.reportCall(with: uuid, updated: update)
        // Reports go out in order.
        #expect(await fixture.waitFor(uuid, state: "connecting"))
        #expect(await fixture.waitFor(uuid, state: "active"))
        #expect(await fixture.waitFor(uuid, "CallerName", .string("Carol")))

        try await controller.requestTransaction(with: CXSetMutedCallAction(call: uuid, muted: true))
        let muted = try #require(await delegate.next(CXSetMutedCallAction.self))
        #expect(muted.callUUID == uuid && muted.isMuted)

        try await controller.requestTransaction(with: CXPlayDTMFCallAction(call: uuid, digits: "12#", type: .softPause))
        let dtmf = try #require(await delegate.next(CXPlayDTMFCallAction.self))
        #expect(dtmf.digits == "12#" && dtmf.type == .softPause && dtmf.callUUID == uuid)

        try await controller.requestTransaction(with: CXSetHeldCallAction(call: uuid, onHold: true))
        let held = try #require(await delegate.next(CXSetHeldCallAction.self))
        #expect(held.callUUID == uuid && held.isOnHold)
        #expect(await fixture.waitFor(uuid, state: "held"))

        provider.reportCall(with: uuid, endedAt: nil, reason: .remoteEnded)
        #expect(await fixture.waitFor(uuid, state: "ended"))
    }

    @Test("two grouping calls: the set-group action names the other call")
    func group() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider()
        let controller = try fixture.controller()
        var calls: [UUID] = []
        for handle in ["a", "b"] {
            let uuid = UUID()
            let update = CXCallUpdate()
            update.remoteHandle = CXHandle(type: .generic, value: handle)
            update.supportsGrouping = true
            try await provider.reportNewIncomingCall(with: uuid, update: update)
            try await controller.requestTransaction(with: CXAnswerCallAction(call: uuid))
            #expect(await delegate.next(CXAnswerCallAction.self)?.callUUID == uuid)
            #expect(await fixture.waitFor(uuid, state: "active"))
            calls.append(uuid)
        }
        try await controller.requestTransaction(with: CXSetGroupCallAction(call: calls[1], callUUIDToGroupWith: calls[0]))
        let group = try #require(await delegate.next(CXSetGroupCallAction.self))
        #expect(group.callUUID == calls[1] && group.callUUIDToGroupWith == calls[0])
        #expect(await fixture.waitFor(calls[1], "Group", .string(calls[0].uuidString.lowercased())))
    }

    @Test("an action left alone times out: the delegate hears it, and fulfilling it later does nothing")
    func timedOut() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider(manualClock: true)
        delegate.mode = .keep
        let controller = try fixture.controller()
        let uuid = UUID()
        try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
        let transaction = CXTransaction(action: CXAnswerCallAction(call: uuid))
        try await controller.request(transaction)
        let answer = try #require(await delegate.next(CXAnswerCallAction.self))
        #expect(!answer.isComplete)
        #expect(provider.pendingTransactions.map(\.uuid) == [transaction.uuid])
        // The action timeout is 10 s.
        await fixture.advanceClock(by: 10)
        let event = await delegate.nextEvent { if case .timedOut = $0 { true } else { false } }
        guard case .timedOut(let action)? = event else { Issue.record("no timedOutPerforming"); return }
        #expect(action.uuid == answer.uuid)
        #expect(action === answer)
        #expect(answer.isComplete)
        answer.fulfill()
        #expect(provider.pendingTransactions.isEmpty)
    }

    @Test("a delegate that does not implement an action fails it at once")
    func defaultImplementationsFail() async throws {
        final class Minimal: CXProviderDelegate, @unchecked Sendable {
            let began = EventBuffer<Bool>()
            func providerDidReset(_ provider: CXProvider) {}
            func providerDidBegin(_ provider: CXProvider) { began.append(true) }
        }
        let fixture = try await KitFixture(actionTimeout: 30)
        let provider = CXProvider(configuration: CXProviderConfiguration(localizedName: "Minimal"), serviceConnection: fixture.serviceConnection)
        let delegate = Minimal()
        provider.setDelegate(delegate, queue: nil)
        #expect(await delegate.began.next() != nil)
        let uuid = UUID()
        try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
        // Another process answers and hears the failure long before the 30 s timeout.
        let other = try Connection(address: fixture.bus.address)
        let completions = try await SignalRecorder(other, MatchRule(interface: Telephony1.CallController.interface))
        _ = try await other.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                                 member: "AnswerCall", [.string(uuid.uuidString)])
        let completed = await completions.next("TransactionCompleted")
        let args = try #require(try completed?.arguments())
        #expect(args[1] == .bool(false))
        #expect(args[2] == .string(APIError.actionFailed.rawValue))
    }

    @Test("DidRequestShowApp (the app's button on a call's notification) reaches the delegate with the call's UUID")
    func showApp() async throws {
        let fixture = try await KitFixture()
        let queue = DispatchQueue(label: "app")
        let (provider, delegate) = try await fixture.provider(queue: queue)
        let uuid = UUID()
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: "alice")
        try await provider.reportNewIncomingCall(with: uuid, update: update)
        // Sent as the service sends it (its notification button is tested in CallControlsTests): the first provider's path.
        let service = try #require(fixture.service)
        try service.connection.emit(Telephony1.Provider.didRequestShowApp, path: Telephony1.providerPath(1), uuid.uuidString.lowercased())
        let event = await delegate.nextEvent { if case .showApp = $0 { true } else { false } }
        guard case .showApp(let shown)? = event else { Issue.record("no didRequestShowAppFor"); return }
        #expect(shown == uuid)
        #expect(delegate.wrongQueue == 0)
    }
}
