import DBus
import PeerIdentity
import DBusTestSupport
import Foundation
import Synchronization
import Testing

/// The access policy in front of dispatch: every caller identified once, before any of its calls
/// runs and in the order they came; a denial is the reply; GetManagedObjects filtered.
@Suite("Caller identification and the access policy")
struct AccessPolicyTests {
    /// Refuses `Refuse`-like members and property writes of Volume; hides /org/example/Test1/Hidden.
    final class Policy: AccessPolicy, @unchecked Sendable {
        let requests = Mutex<[AccessRequest]>([])
        func check(_ request: AccessRequest) -> DBusError? {
            requests.withLock { $0.append(request) }
            if request.member == "Hold" { return DBusError.accessDenied("\(request.caller.name) may not hold") }
            if request.isPropertyWrite && request.property == "Volume" { return DBusError.accessDenied("Volume is not yours") }
            return nil
        }
        func reveals(_ path: ObjectPath, to caller: Caller) -> Bool { path.rawValue.hasSuffix("Hidden") == false }
    }

    @Test("the policy is asked once per message, whatever the message: a method, one without an interface, a wrong signature, a property read or write, an unknown object, interface or method, introspection (issue 54: twice for every call)")
    func oneCheckPerMessage() async throws {
        let fixture = try await Fixture()
        let policy = Policy()
        fixture.objects.setAccessPolicy(policy)
        var sent = 0
        func send(_ interface: String?, _ member: String, _ arguments: [DBusValue] = [], at path: ObjectPath = Fixture.path) async {
            sent += 1
            let message = try! Message.methodCall(destination: Fixture.name, path: path, interface: interface, member: member)
            try! message.append(arguments)
            _ = try? await fixture.client.send(call: message, timeout: .seconds(25))
        }
        await send(Fixture.interface, "Echo", [.variant(.string("hello"))])
        await send(nil, "Echo", [.variant(.string("no interface"))])
        await send(Fixture.interface, "Concat", [.int32(1)])
        await send(Fixture.interface, "Hold")
        await send("org.freedesktop.DBus.Properties", "Get", [.string(Fixture.interface), .string("Volume")])
        await send("org.freedesktop.DBus.Properties", "GetAll", [.string(Fixture.interface)])
        await send("org.freedesktop.DBus.Properties", "Set", [.string(Fixture.interface), .string("Volume"), .variant(.int32(9))])
        await send(Fixture.interface, "Echo", [.variant(.string("lost"))], at: "/org/example/Nowhere")
        await send(Fixture.interface + "Missing", "Echo")
        await send(Fixture.interface, "Missing")
        await send(nil, "Missing")
        await send("org.freedesktop.DBus.Introspectable", "Introspect")
        let checks = policy.requests.withLock { $0.count }
        #expect(checks == sent, "\(checks) checks for \(sent) messages")
        // The one without an interface is checked as the method found for it.
        #expect(policy.requests.withLock { $0[1].interface } == Fixture.interface)
    }

    @Test func denialsAreTheReplyAndTheHandlerNeverRuns() async throws {
        let fixture = try await Fixture()
        let policy = Policy()
        fixture.objects.setAccessPolicy(policy)
        let held = await dbusError {
            _ = try await fixture.client.call(destination: Fixture.name, path: Fixture.path, interface: Fixture.interface, member: "Hold")
        }
        #expect(held?.name == DBusError.Name.accessDenied && held?.message.contains(fixture.client.uniqueName) == true, "\(String(describing: held))")
        #expect(await fixture.held.next(timeout: .milliseconds(200)) == nil)
        let volume = await dbusError { _ = try await fixture.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.int32(9))]) }
        #expect(volume?.message == "Volume is not yours")
        #expect(try await fixture.properties("Get", [.string(Fixture.interface), .string("Volume")]) == [.variant(.int32(5))])
        let seen = policy.requests.withLock { $0 }
        #expect(seen.allSatisfy { $0.caller == Caller(name: fixture.client.uniqueName, identity: UnidentifiedCaller()) })
        #expect(seen.last?.propertyInterface == Fixture.interface && seen.last?.property == "Volume" && seen.last?.member == "Get")
    }

    @Test func callsWaitingForIdentificationRunInTheOrderTheyCame() async throws {
        let fixture = try await Fixture()
        fixture.objects.setAccessPolicy(Policy())
        let order = Mutex<[Int32]>([])
        try fixture.objects.export("/org/example/Test1/Order", [Interface("org.example.Test1.Order") {
            Method("Record", in: ["n": "i"]) { call in
                let n = try call.decode(Int32.self)
                order.withLock { $0.append(n) }
                return .empty
            }
        }])
        // Sent without waiting: they arrive before the first identification is done.
        for index in 0..<50 {
            let message = try Message.methodCall(destination: Fixture.name, path: "/org/example/Test1/Order", interface: "org.example.Test1.Order", member: "Record")
            try message.append([.int32(Int32(index))])
            message.setNoReply(true)
            fixture.client.send(message)
        }
        // A call with a reply after them: when it is answered, the 50 have run.
        _ = try await fixture.client.call(destination: Fixture.name, path: "/org/example/Test1/Order", interface: "org.example.Test1.Order",
                                          member: "Record", [.int32(50)])
        #expect(order.withLock { $0 } == Array(0...50))
    }

    @Test func aCallerIsForgottenWhenItLeavesAndGetManagedObjectsIsFiltered() async throws {
        let fixture = try await Fixture()
        try await fixture.server.followNameOwners()
        fixture.objects.setAccessPolicy(Policy())
        try fixture.objects.export("/org/example/Test1/Hidden", [fixture.echoInterface()])
        try fixture.objects.export("/org/example/Test1/Shown", [fixture.echoInterface()])
        let managed = try await fixture.client.call(destination: Fixture.name, path: Fixture.path,
                                                    interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let entries)? = managed.first else { Issue.record("no objects"); return }
        #expect(entries.map(\.key) == [.objectPath("/org/example/Test1/Shown")])
        #expect(fixture.objects.identifiedApp(of: fixture.client.uniqueName) == .host)

        let name = fixture.client.uniqueName
        fixture.client.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while fixture.objects.identifiedApp(of: name) != nil && ContinuousClock.now < deadline { await Task.yield() }
        #expect(fixture.objects.identifiedApp(of: name) == nil)
    }
}
