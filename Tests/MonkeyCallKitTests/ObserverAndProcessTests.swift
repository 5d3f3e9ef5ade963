import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
@testable import MonkeyCallKit
import Testing

@Suite("MonkeyCallKit: the call observer, and provider and controller in two processes")
struct ObserverAndProcessTests {
    @Test("the observer hears a call ring, connect, hold and end, and lists the live calls")
    func observer() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider()
        let controller = try fixture.controller()
        let recorder = RecordingObserver()
        controller.callObserver.setDelegate(recorder, queue: nil)
        // An observer made before the call exists and one made while it rings both see it.
        let uuid = UUID()
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: "dave")
        try await provider.reportNewIncomingCall(with: uuid, update: update)
        let ringing = try #require(await recorder.next(uuid) { !$0.hasConnected })
        #expect(!ringing.isOutgoing && !ringing.hasEnded && !ringing.isOnHold)
        let late = CXCallObserver(serviceConnection: fixture.serviceConnection)
        let lateRecorder = RecordingObserver()
        late.setDelegate(lateRecorder, queue: nil)
        #expect(await lateRecorder.next(uuid) { _ in true } != nil)
        #expect(late.calls.map(\.uuid) == [uuid])

        try await controller.requestTransaction(with: CXAnswerCallAction(call: uuid))
        #expect(await recorder.next(uuid) { $0.hasConnected && !$0.isOnHold } != nil)
        #expect(controller.callObserver.calls.first?.hasConnected == true)
        try await controller.requestTransaction(with: CXSetHeldCallAction(call: uuid, onHold: true))
        #expect(await recorder.next(uuid) { $0.isOnHold } != nil)
        try await controller.requestTransaction(with: CXEndCallAction(call: uuid))
        #expect(await recorder.next(uuid) { $0.hasEnded } != nil)
        #expect(await delegate.next(CXEndCallAction.self) != nil)
        #expect(await lateRecorder.next(uuid) { $0.hasEnded } != nil)
        #expect(late.calls.isEmpty)
    }

    @Test("a controller in another process starts a call that reaches this process's provider")
    func twoProcesses() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider()
        let elsewhere = try fixture.controller(ownConnection: true)
        let recorder = RecordingObserver()
        elsewhere.callObserver.setDelegate(recorder, queue: nil)
        let uuid = UUID()
        try await elsewhere.requestTransaction(with: CXStartCallAction(call: uuid, handle: CXHandle(type: .phoneNumber, value: "+15551234")))
        let start = try #require(await delegate.next(CXStartCallAction.self))
        #expect(start.callUUID == uuid && start.handle.type == .phoneNumber)
        provider.reportOutgoingCall(with: uuid, connectedAt: nil)
        #expect(await fixture.waitFor(uuid, state: "active"))
        // The other process's observer sees the outgoing call connected.
        let call = try #require(await recorder.next(uuid) { $0.hasConnected })
        #expect(call.isOutgoing)
        // And its requests are performed here too.
        try await elsewhere.requestTransaction(with: CXSetMutedCallAction(call: uuid, muted: true))
        #expect(await delegate.next(CXSetMutedCallAction.self)?.isMuted == true)
    }

    @Test("a call started right after the provider was created goes to that provider")
    func requestRightAfterCreation() async throws {
        let fixture = try await KitFixture()
        let provider = CXProvider(configuration: CXProviderConfiguration(localizedName: "Eager"), serviceConnection: fixture.serviceConnection)
        let delegate = RecordingDelegate(queue: nil)
        provider.setDelegate(delegate, queue: nil)
        let controller = try fixture.controller()
        let uuid = UUID()
        try await controller.requestTransaction(with: CXStartCallAction(call: uuid, handle: CXHandle(type: .generic, value: "frank")))
        #expect(await delegate.next(CXStartCallAction.self)?.callUUID == uuid)
        _ = provider
    }
}
