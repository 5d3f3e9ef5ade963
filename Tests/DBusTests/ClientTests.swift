import DBus
import DBusTestSupport
import Foundation
import Testing

@Suite("The client side: signals, destinations and vanishing peers")
struct ClientTests {
    @Test func signalToOneDestinationReachesOnlyIt() async throws {
        let fixture = try await Fixture()
        let bystander = try Connection(address: fixture.bus.address)
        let rule = MatchRule(interface: Fixture.interface, member: "Ping")
        let toClient = try await SignalRecorder(fixture.client, rule)
        let toBystander = try await SignalRecorder(bystander, rule)
        let object = try #require(fixture.objects.exportedObject(at: Fixture.path))
        try object.emit("Ping", on: Fixture.interface, [.string("just you")], to: fixture.client.uniqueName)
        try object.emit("Ping", on: Fixture.interface, [.string("everyone")])
        #expect(try await toClient.next("Ping")?.arguments() == [.string("just you")])
        #expect(try await toClient.next("Ping")?.arguments() == [.string("everyone")])
        // The broadcast arrives after the unicast would have: so the bystander has seen everything it will.
        #expect(try await toBystander.next("Ping")?.arguments() == [.string("everyone")])
        #expect(toBystander.buffer.all.count == 1)
    }

    @Test func undeclaredOrMistypedSignalsAreRefused() async throws {
        let fixture = try await Fixture()
        let object = try #require(fixture.objects.exportedObject(at: Fixture.path))
        #expect(throws: DBusError.self) { try object.emit("Nope", on: Fixture.interface) }
        #expect(throws: DBusError.self) { try object.emit("Ping", on: Fixture.interface, [.int32(1)]) }
    }

    @Test func noticeWhenAPeerLeavesTheBus() async throws {
        let fixture = try await Fixture()
        try await fixture.server.followNameOwners()
        let leaver = try Connection(address: fixture.bus.address)
        let gone = EventBuffer<String>()
        let watch = fixture.server.watchVanishing(of: leaver.uniqueName) { gone.append(leaver.uniqueName) }
        let stays = try Connection(address: fixture.bus.address)
        let other = fixture.server.watchVanishing(of: stays.uniqueName) { gone.append(stays.uniqueName) }
        leaver.close()
        #expect(await gone.next() == leaver.uniqueName)
        #expect(gone.all == [leaver.uniqueName])
        _ = (watch, other)
    }

    @Test func lostBusIsReportedNotFatal() async throws {
        let bus = try await PrivateBus.start()
        let connection = try Connection(address: bus.address)
        let lost = EventBuffer<String>()
        connection.onDisconnect { lost.append($0.name) }
        bus.stop()
        #expect(await lost.next() == DBusError.Name.disconnected)
        let error = await dbusError { _ = try await connection.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName, member: "GetId") }
        #expect(error != nil)
    }

    @Test func nameOwnershipAndReplacement() async throws {
        let fixture = try await Fixture()
        let second = try Connection(address: fixture.bus.address)
        #expect(try await second.requestName(Fixture.name) == .exists)
        #expect(try await second.requestName(Fixture.name, replace: true) == .primaryOwner)
        #expect(try await fixture.client.nameOwner(Fixture.name) == second.uniqueName)
        try await second.releaseName(Fixture.name)
        #expect(try await fixture.client.nameOwner(Fixture.name) == nil)
    }
}
