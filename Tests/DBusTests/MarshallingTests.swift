import DBus
import DBusTestSupport
import Foundation
import Testing

@Suite("Every D-Bus type survives a round trip through a real bus")
struct MarshallingTests {
    static let samples: [DBusValue] = [
        .byte(0), .byte(255), .bool(true), .bool(false),
        .int16(.min), .uint16(.max), .int32(.min), .uint32(.max), .int64(.min), .int64(.max), .uint64(.max),
        .double(-1.5), .double(.infinity), .string(""), .string("héllo ✓ 日本"),
        .objectPath("/"), .objectPath("/a/b_c/D9"), .signature(""), .signature("a{sv}(iso)"),
        .array(element: "s", []), .array(element: "a{sv}", []), .array(element: "x", [.int64(1), .int64(-2)]),
        .array(element: "y", (0..<255).map { DBusValue.byte(UInt8($0)) }),
        .array(element: "as", [.array(element: "s", [.string("x")]), .array(element: "s", [])]),
        .dictionary(key: "s", value: "v", []),
        .dictionary(key: "i", value: "s", [(key: .int32(2), value: .string("two")), (key: .int32(1), value: .string("one"))]),
        .vardict(["Name": .string("x"), "Nested": .vardict(["Deeper": .vardict(["Leaf": .uint32(7)])]), "List": .array(element: "v", [.variant(.bool(true))])]),
        .structure([.string("a"), .int32(1), .structure([.objectPath("/x"), .array(element: "d", [.double(0.25)])])]),
        .variant(.variant(.variant(.string("three deep")))),
        .array(element: "(sa{sv})", [.structure([.string("start"), .vardict(["Video": .bool(true)])])]),
    ]

    @Test("each sample comes back equal", arguments: samples)
    func roundTrip(_ value: DBusValue) async throws {
        let fixture = try await Fixture()
        let reply = try await fixture.callEcho("Echo", [.variant(value)])
        #expect(reply == [.variant(value)])
        if case .variant(let inner)? = reply.first { #expect(inner.signature == value.signature) }
        // And through a spec's handler, which reads it off the wire itself.
        let typed = try await fixture.callEcho("Echo", [.variant(value)], interface: Fixture.Typed.interface)
        #expect(typed == [.variant(value)])
    }

    @Test("a string of 32 MiB, and one of 64 KiB in every element of an array")
    func largeStrings() async throws {
        let fixture = try await Fixture()
        let big = String(repeating: "x", count: 32 << 20)
        // What is tested is the value, not the time: 32 MiB each way through a debug build took more
        // than 25 s while the whole suite ran two GNOME Shells and a KRunner beside it.
        let reply = try await fixture.callEcho("Echo", [.variant(.string(big))], timeout: .seconds(180))
        guard case .variant(.string(let echoed))? = reply.first else { Issue.record("wrong reply \(reply.first?.signature as Any)"); return }
        #expect(echoed.utf8.count == big.utf8.count)
        let many = DBusValue.array(element: "s", Array(repeating: .string(String(repeating: "y", count: 64 << 10)), count: 64))
        #expect(try await fixture.callEcho("Echo", [.variant(many)], timeout: .seconds(180)) == [.variant(many)])
    }

    @Test("a unix fd reaches the server, which writes through it")
    func unixFD() async throws {
        let fixture = try await Fixture()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = UnixFD(owning: fds[1])
        try await fixture.callEcho("WriteTo", [.unixFD(writeEnd), .string("through the fd")])
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fds[0], &buffer, 64)
        defer { close(fds[0]) }
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "through the fd")
        // And an fd inside a variant comes back as a descriptor of the same pipe.
        let reply = try await fixture.callEcho("Echo", [.variant(.unixFD(writeEnd))])
        #expect(reply == [.variant(.unixFD(writeEnd))])
        // A spec's handler reads an fd too: at the top level and in a variant, libdbus' iterators read that body.
        let typed = try await fixture.callEcho("WriteTo", [.unixFD(writeEnd), .string("typed")], interface: Fixture.Typed.interface)
        #expect(typed == [.uint32(5)])
        let typedReply = try await fixture.callEcho("Echo", [.variant(.unixFD(writeEnd))], interface: Fixture.Typed.interface)
        #expect(typedReply == [.variant(.unixFD(writeEnd))])
        let more = read(fds[0], &buffer, 64)
        #expect(String(decoding: buffer.prefix(max(more, 0)), as: UTF8.self) == "typed")
    }

    @Test("typed decoding of arguments and option dictionaries")
    func typedDecoding() async throws {
        let fixture = try await Fixture()
        let reply = try await fixture.callEcho("Concat", [.string("a"), .int32(7), .vardict(["Suffix": .string("!"), "Unknown": .int32(1)])])
        #expect(reply == [.string("a7!")])
        let error = await dbusError { _ = try await fixture.callEcho("Concat", [.string("a"), .int32(7), .vardict(["Suffix": .int32(1)])]) }
        #expect(error?.name == DBusError.Name.invalidArgs)
        #expect(error?.message.contains("'Suffix'") == true)
    }

    @Test("values that libdbus would abort on are refused with an error instead")
    func invalidValuesAreErrors() throws {
        let message = try Message.signal(path: "/x", interface: "org.example.X", member: "Y")
        #expect(throws: DBusError.self) { try message.append([.string("nul\0inside")]) }
        #expect(throws: DBusError.self) { try message.append([.array(element: "s", [.int32(1)])]) }
        // Through variables: a literal argument would be taken as a (checked) literal.
        let badPath = "/bad//path", badSignature = "a{vs}"
        #expect(throws: DBusError.self) { try ObjectPath(badPath) }
        #expect(throws: DBusError.self) { try Signature(badSignature) }
        #expect(throws: DBusError.self) { try Message.methodCall(destination: "not a name", path: "/", interface: nil, member: "X") }
    }
}
