import DBus
import DBusTestSupport
import Foundation
import TelephonyCore
import MonkeyCallAPI
import TelephonyService
import Testing

/// Every error of the API's provider and controller sections, over the bus.
@Suite("Errors have their API names, and the service stays up")
struct ErrorTests {
    static let error = "org.monkeycall.Telephony1.Error."

    @Test func transactionErrors() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let other = try await fixture.provider("Other")
        let uuid = try await app.reportIncoming()

        func requestError(_ actions: [(String, [String: DBusValue])]) async -> String? {
            await dbusError { try await fixture.request(actions) }?.name
        }
        #expect(await requestError([]) == Self.error + "EmptyTransaction")
        #expect(await requestError([("answer", ["CallUUID": .string(UUID().uuidString)])]) == Self.error + "UnknownCallUUID")
        #expect(await requestError([("start", ["CallUUID": .string(uuid.uppercased()), "Handle": .string("x"), "Provider": .objectPath(app.path)])])
                == Self.error + "CallUUIDAlreadyExists")
        #expect(await requestError([("set-held", ["CallUUID": .string(uuid), "OnHold": .bool(true)])]) == Self.error + "InvalidAction")
        #expect(await requestError([("fly", ["CallUUID": .string(uuid)])]) == Self.error + "InvalidAction")
        // Two providers fit a generic handle: the start is ambiguous.
        #expect(await requestError([("start", ["CallUUID": .string(UUID().uuidString), "Handle": .string("x")])]) == Self.error + "UnknownCallProvider")
        #expect(await requestError([("start", ["CallUUID": .string(UUID().uuidString), "Handle": .string("x"), "Provider": .objectPath(Telephony1.providerPath(999))])])
                == Self.error + "UnknownCallProvider")
        // A provider's connection acting on another provider's call.
        let unentitled = await dbusError {
            _ = try await other.connection.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                interface: Telephony1.CallController.interface, member: "AnswerCall", [.string(uuid)])
        }
        #expect(unentitled?.name == Self.error + "Unentitled")
        // Malformed input names what is wrong.
        let badUUID = await dbusError { try await fixture.control("AnswerCall", [.string("not-a-uuid")]) }
        #expect(badUUID?.name == DBusError.Name.invalidArgs)
        #expect(badUUID?.message.contains("not-a-uuid") == true)
        let wrongType = await dbusError { try await fixture.request([("set-held", ["CallUUID": .string(uuid), "OnHold": .string("yes")])]) }
        #expect(wrongType?.name == DBusError.Name.invalidArgs)
        #expect(wrongType?.message.contains("'OnHold'") == true)
        let wrongSignature = await dbusError { try await fixture.control("AnswerCall", [.int32(1)]) }
        #expect(wrongSignature?.name == DBusError.Name.invalidArgs)
        // Nothing above changed the call.
        #expect(await fixture.state(uuid) == "ringing")
    }

    @Test func providerErrors() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let uuid = try await app.reportIncoming()
        let duplicate = await dbusError { try await app.reportIncoming(uuid: uuid.uppercased()) }
        #expect(duplicate?.name == Self.error + "CallUUIDAlreadyExists")
        let huge = await dbusError { try await app.reportIncoming(String(repeating: "x", count: 1025)) }
        #expect(huge?.name == DBusError.Name.invalidArgs)
        let badHandleType = await dbusError { try await app.reportIncoming(update: ["HandleType": .string("pigeon")]) }
        #expect(badHandleType?.name == DBusError.Name.invalidArgs)
        let badReason = await dbusError { try await app.call("ReportCallEnded", [.string(uuid), .string("bored"), .uint64(0)]) }
        #expect(badReason?.name == DBusError.Name.invalidArgs)
        let unknownAction = await dbusError { try await app.call("FulfillAction", [.string(UUID().uuidString), .vardict([:])]) }
        #expect(unknownAction?.name == Self.error + "UnknownAction")
        let unknownCall = await dbusError { try await app.call("ReportCallUpdated", [.string(UUID().uuidString), .vardict([:])]) }
        #expect(unknownCall?.name == Self.error + "UnknownCallUUID")
        #expect(await fixture.state(uuid) == "ringing")
    }

    @Test("only the provider's own connection may act as the provider")
    func strangerGetsAccessDenied() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let uuid = try await app.reportIncoming()
        for (member, arguments) in [("ReportNewIncomingCall", [DBusValue.string(UUID().uuidString), .vardict(["Handle": .string("x")])]),
                                    ("ReportCallEnded", [.string(uuid), .string("failed"), .uint64(0)]),
                                    ("Invalidate", [])] {
            let denied = await dbusError {
                try await fixture.controller.call(destination: Telephony1.busName, path: app.path,
                                                  interface: Telephony1.Provider.interface, member: member, arguments)
            }
            #expect(denied?.name == DBusError.Name.accessDenied, "\(member)")
        }
        #expect(await fixture.state(uuid) == "ringing")
    }

    @Test func registrationErrors() async throws {
        var limits = SwitchboardLimits()
        limits.maximumProvidersPerOwner = 2
        let fixture = try await ServiceFixture(limits: limits)
        func register(_ config: [String: DBusValue]) async -> DBusError? {
            await dbusError {
                try await fixture.controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                  interface: Telephony1.Manager.interface, member: "RegisterProvider", [.vardict(config)])
            }
        }
        #expect(await register([:])?.name == DBusError.Name.invalidArgs)
        #expect(await register(["Name": .string("")])?.name == DBusError.Name.invalidArgs)
        #expect(await register(["Name": .string(String(repeating: "n", count: 65))])?.name == DBusError.Name.invalidArgs)
        let wrongType = await register(["Name": .string("x"), "SupportsVideo": .string("yes")])
        #expect(wrongType?.message.contains("'SupportsVideo'") == true)
        #expect(await register(["Name": .string("x"), "Unknown": .int32(1)]) == nil)
        #expect(await register(["Name": .string("y")]) == nil)
        #expect(await register(["Name": .string("z")])?.name == DBusError.Name.limitsExceeded)
    }

    @Test("groups up to MaximumCallGroups, then MaximumCallGroupsReached")
    func callGroups() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey", ["MaximumCallGroups": .uint32(2)])
        var calls: [String] = []
        for handle in ["a", "b"] {
            let uuid = try await app.reportIncoming(handle, update: ["SupportsGrouping": .bool(true)])
            let transaction = try await fixture.request([("answer", ["CallUUID": .string(uuid)])])
            if !calls.isEmpty { try await app.perform("set-held") }
            try await app.perform("answer")
            #expect(await fixture.completion(of: transaction)?.0 == true)
            calls.append(uuid)
        }
        let third = try await app.reportIncoming("c")
        let refused = await dbusError { try await fixture.request([("answer", ["CallUUID": .string(third)])]) }
        #expect(refused?.name == Self.error + "MaximumCallGroupsReached")
        // Grouping the two calls makes room for the third.
        let group = try await fixture.request([("set-group", ["CallUUID": .string(calls[1]), "GroupWith": .string(calls[0])])])
        try await app.perform("set-group")
        #expect(await fixture.completion(of: group)?.0 == true)
        #expect(try await fixture.callProperty(calls[1], "Group") == .string(calls[0]))
    }
}
