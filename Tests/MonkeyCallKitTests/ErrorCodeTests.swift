import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
@testable import MonkeyCallKit
@testable import TelephonyService
import TelephonyCore
import Testing

@Suite("MonkeyCallKit error codes for the service's errors")
struct ErrorCodeTests {
    @Test("an incoming call with a UUID in use is callUUIDAlreadyExists, by async throw, completion and catch pattern")
    func incomingDuplicate() async throws {
        let fixture = try await KitFixture()
        let (provider, _) = try await fixture.provider()
        let uuid = UUID()
        try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
        let error = await caught { try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate()) }
        #expect((error as? CXErrorCodeIncomingCallError)?.code == .callUUIDAlreadyExists, "\(String(describing: error))")
        // The completion variant hears the same, on the delegate's queue.
        let completion = EventBufferBox()
        provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate()) { completion.buffer.append($0.map { "\($0)" } ?? "nil") }
        #expect(await completion.buffer.next()?.contains("callUUIDAlreadyExists") == true)
        do {
            try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
            Issue.record("accepted twice")
        } catch CXErrorCodeIncomingCallError.callUUIDAlreadyExists {
            // CallKit's way of matching works.
        }
    }

    @Test("requests: emptyTransaction, unknownCallUUID, callUUIDAlreadyExists, invalidAction, maximumCallGroupsReached")
    func requestErrors() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider { $0.maximumCallGroups = 1 }
        let controller = try fixture.controller()
        func code(_ body: () async throws -> Void) async -> CXErrorCodeRequestTransactionError.Code? {
            (await caught(body) as? CXErrorCodeRequestTransactionError)?.code
        }
        #expect(await code { try await controller.requestTransaction(with: [CXAction]()) } == .emptyTransaction)
        #expect(await code { try await controller.requestTransaction(with: CXEndCallAction(call: UUID())) } == .unknownCallUUID)

        let first = UUID()
        try await provider.reportNewIncomingCall(with: first, update: CXCallUpdate())
        #expect(await code { try await controller.requestTransaction(with: CXStartCallAction(call: first, handle: CXHandle(type: .generic, value: "x"))) }
            == .callUUIDAlreadyExists)
        #expect(await code { try await controller.requestTransaction(with: CXSetGroupCallAction(call: first, callUUIDToGroupWith: nil)) } == .invalidAction)
        do {
            try await controller.requestTransaction(with: CXEndCallAction(call: UUID()))
        } catch CXErrorCodeRequestTransactionError.unknownCallUUID {
            // CallKit's way of matching works.
        }

        try await controller.requestTransaction(with: CXAnswerCallAction(call: first))
        #expect(await delegate.next(CXAnswerCallAction.self) != nil)
        #expect(await fixture.waitFor(first, state: "active"))
        let second = UUID()
        try await provider.reportNewIncomingCall(with: second, update: CXCallUpdate())
        #expect(await code { try await controller.requestTransaction(with: CXAnswerCallAction(call: second)) } == .maximumCallGroupsReached)

        // The completion variant reports on the controller's queue.
        let completion = EventBufferBox()
        controller.requestTransaction(with: [CXAction]()) { completion.buffer.append($0.map { "\($0)" } ?? "nil") }
        #expect(await completion.buffer.next()?.contains("emptyTransaction") == true)
    }

    @Test("no service on the bus: a clear CXError naming monkeycalld; the provider registers once it starts")
    func serviceNotRunning() async throws {
        let fixture = try await KitFixture(startService: false)
        let (provider, delegate) = try await fixture.provider()
        let controller = try fixture.controller()
        let request = await caught { try await controller.requestTransaction(with: CXEndCallAction(call: UUID())) }
        #expect((request as? CXError)?.code == .serviceNotRunning)
        #expect("\(String(describing: request))".contains("monkeycalld is not running"))
        let report = await caught { try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate()) }
        #expect((report as? CXError)?.code == .serviceNotRunning, "\(String(describing: report))")

        try await fixture.startService()
        #expect(await delegate.waitFor("began"))
        try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate())
    }

    @Test("an invalidated provider ends its calls and refuses more reports")
    func invalidate() async throws {
        let (fixture, provider, _) = try await KitFixture.withProvider()
        let uuid = UUID()
        try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
        provider.invalidate()
        #expect(await fixture.waitFor(uuid, state: "ended"))
        let error = await caught { try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate()) }
        #expect((error as? CXError)?.code == .invalidated, "\(String(describing: error))")
    }
}

/// Strings heard from a completion handler.
final class EventBufferBox: Sendable {
    let buffer = EventBuffer<String>()
}

@Suite("MonkeyCallKit when the registration is lost")
struct RegistrationLostTests {
    @Test("the service drops the provider: providerDidReset, a new registration, providerDidBegin")
    func registrationLost() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider()
        let path = try await provider.registeredPath()
        let service = try #require(fixture.service)
        let id = try #require(Telephony1.providerID(from: path))
        TelephonyActor.queue.async { TelephonyActor.assumeIsolated { service.switchboard.invalidateProvider(ProviderID(id)) } }
        #expect(await delegate.waitFor("reset"))
        #expect(await delegate.waitFor("began"))
        #expect(try await provider.registeredPath() != path)
        try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate())
    }
}

@Suite("MonkeyCallKit when the bus goes away")
struct BusLostTests {
    @Test("the provider hears providerDidReset and later calls fail with a CXError")
    func busLost() async throws {
        let (fixture, provider, delegate) = try await KitFixture.withProvider()
        fixture.bus.stop()
        #expect(await delegate.waitFor("reset"))
        let error = await caught { try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate()) }
        #expect(error is CXError, "\(String(describing: error))")
    }
}
