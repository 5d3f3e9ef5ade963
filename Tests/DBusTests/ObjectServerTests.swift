import DBus
import DBusTestSupport
import Foundation
import Testing

@Suite("Exported objects: introspection, properties, object manager, replies and errors")
struct ObjectServerTests {
    @Test func introspectionComesFromTheDeclaration() async throws {
        let fixture = try await Fixture()
        let reply = try await fixture.client.call(destination: Fixture.name, path: Fixture.path,
                                                  interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        guard case .string(let xml)? = reply.first else { Issue.record("no xml"); return }
        #expect(xml.contains("<interface name=\"org.example.Test1.Echo\">"))
        #expect(xml.contains("<arg name=\"options\" type=\"a{sv}\" direction=\"in\"/>"))
        #expect(xml.contains("<property name=\"Volume\" type=\"i\" access=\"readwrite\"/>"))
        #expect(xml.contains("<signal name=\"Ping\">"))
        #expect(xml.contains("org.freedesktop.DBus.ObjectManager"))
        #expect(xml.contains("org.freedesktop.DBus.Properties"))
        // Parent nodes list their children.
        let parent = try await fixture.client.call(destination: Fixture.name, path: "/org/example",
                                                   interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        guard case .string(let parentXML)? = parent.first else { Issue.record("no xml"); return }
        #expect(parentXML.contains("<node name=\"Test1\"/>"))
    }

    @Test func propertiesGetGetAllSetAndChanged() async throws {
        let fixture = try await Fixture()
        let changes = try await SignalRecorder(fixture.client, MatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        #expect(try await fixture.properties("Get", [.string(Fixture.interface), .string("Version")]) == [.variant(.string("1.0"))])
        let all = try await fixture.properties("GetAll", [.string(Fixture.interface)])
        #expect(all.first?.vardict == ["Version": .string("1.0"), "Volume": .int32(5)])

        try await fixture.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.int32(8))])
        let changed = await changes.next("PropertiesChanged")
        #expect(try changed?.arguments() == [.string(Fixture.interface), .vardict(["Volume": .int32(8)]), .array(element: "s", [])])
        #expect(try await fixture.properties("Get", [.string(Fixture.interface), .string("Volume")]) == [.variant(.int32(8))])

        let readOnly = await dbusError { _ = try await fixture.properties("Set", [.string(Fixture.interface), .string("Version"), .variant(.string("2"))]) }
        #expect(readOnly?.name == DBusError.Name.propertyReadOnly)
        let wrongType = await dbusError { _ = try await fixture.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.string("loud"))]) }
        #expect(wrongType?.name == DBusError.Name.invalidArgs)
        let rejected = await dbusError { _ = try await fixture.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.int32(99))]) }
        #expect(rejected?.message == "Volume must be 0 to 10")
        let unknown = await dbusError { _ = try await fixture.properties("Get", [.string(Fixture.interface), .string("Nope")]) }
        #expect(unknown?.name == DBusError.Name.unknownProperty)
        let unknownInterface = await dbusError { _ = try await fixture.properties("GetAll", [.string("org.example.Nope")]) }
        #expect(unknownInterface?.name == DBusError.Name.unknownInterface)
        // Rejected and failed sets changed nothing and announced nothing.
        #expect(await changes.next("PropertiesChanged", timeout: .milliseconds(200)) == nil)
    }

    @Test func objectManagerAnnouncesChildren() async throws {
        let fixture = try await Fixture()
        let signals = try await SignalRecorder(fixture.client, MatchRule(interface: "org.freedesktop.DBus.ObjectManager"))
        let child = Fixture.path.appending("Child").appending("c1")
        let childInterface = Interface("org.example.Test1.Child") { Property("Label", "s") { .string("first") } }
        try fixture.objects.export(child, [childInterface])

        let added = await signals.next("InterfacesAdded")
        #expect(try added?.arguments() == [.objectPath(child), .dictionary(key: "s", value: "a{sv}", [(key: .string("org.example.Test1.Child"), value: .vardict(["Label": .string("first")]))])])
        let managed = try await fixture.client.call(destination: Fixture.name, path: Fixture.path,
                                                    interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = managed.first else { Issue.record("bad reply"); return }
        #expect(objects.map(\.key) == [.objectPath(child)])

        fixture.objects.unexport(child)
        let removed = await signals.next("InterfacesRemoved")
        #expect(try removed?.arguments() == [.objectPath(child), .array(element: "s", [.string("org.example.Test1.Child")])])
        let after = await dbusError { _ = try await fixture.client.call(destination: Fixture.name, path: child, interface: "org.freedesktop.DBus.Properties", member: "GetAll", [.string("org.example.Test1.Child")]) }
        #expect(after?.name == DBusError.Name.unknownObject)
    }

    @Test func handlersMayReplyLater() async throws {
        let fixture = try await Fixture()
        async let held = fixture.callEcho("Hold")
        // Release only once the server holds the call.
        #expect(await fixture.held.next() == fixture.client.uniqueName)
        #expect(try await fixture.callEcho("Release") == [.uint32(1)])
        #expect(try await held == [.bool(true)])
    }

    @Test func errorRepliesKeepTheirName() async throws {
        let fixture = try await Fixture()
        let error = await dbusError { _ = try await fixture.callEcho("Refuse") }
        #expect(error == DBusError(name: "org.example.Test1.Error.Refused", message: "refused on purpose"))
    }

    @Test func callTimeoutIsAnError() async throws {
        let fixture = try await Fixture()
        let message = try Message.methodCall(destination: Fixture.name, path: Fixture.path, interface: Fixture.interface, member: "Hold")
        let error = await dbusError { _ = try await fixture.client.send(call: message, timeout: .milliseconds(100)) }
        #expect(error?.name == DBusError.Name.noReply)
    }

    @Test("bad input gets the standard errors and the server stays up")
    func badInput() async throws {
        let fixture = try await Fixture()
        let wrongSignature = await dbusError { _ = try await fixture.callEcho("Concat", [.string("a"), .string("b"), .vardict([:])]) }
        #expect(wrongSignature?.name == DBusError.Name.invalidArgs)
        #expect(wrongSignature?.message.contains("argument 2 'b' must be of type 'i', got 's'") == true)
        let missing = await dbusError { _ = try await fixture.callEcho("Concat", [.string("a")]) }
        #expect(missing?.message.contains("argument 2 'b' of type 'i' is missing") == true)
        let extra = await dbusError { _ = try await fixture.callEcho("Echo", [.variant(.int32(1)), .int32(2)]) }
        #expect(extra?.name == DBusError.Name.invalidArgs)
        let unknownObject = await dbusError { _ = try await fixture.callEcho("Echo", [.variant(.int32(1))], path: "/nowhere") }
        #expect(unknownObject?.name == DBusError.Name.unknownObject)
        let unknownInterface = await dbusError { _ = try await fixture.callEcho("Echo", [.variant(.int32(1))], interface: "org.example.Nope") }
        #expect(unknownInterface?.name == DBusError.Name.unknownInterface)
        let unknownMethod = await dbusError { _ = try await fixture.callEcho("Nope") }
        #expect(unknownMethod?.name == DBusError.Name.unknownMethod)
        // Still answering.
        #expect(try await fixture.callEcho("Echo", [.variant(.int32(42))]) == [.variant(.int32(42))])
        _ = try await fixture.client.call(destination: Fixture.name, path: Fixture.path, interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }
}
