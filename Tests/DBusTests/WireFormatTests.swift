@testable import DBus
import DBusTestSupport
import Foundation
import Testing

/// Bodies are written and read as bytes here (`WireWriter`, `WireReader`), and
/// by libdbus' iterators where that cannot be done (unix fds). The two must agree.
@Suite("Message bodies as bytes agree with libdbus")
struct WireFormatTests {
    static let samples = MarshallingTests.samples.filter { !$0.description.contains("fd") }
        + [.vardict(["Id": .uint64(7), "Handle": .string("+15551234567"), "Outgoing": .bool(false), "Empty": .array(element: "t", [])])]

    private func message() throws -> Message {
        try Message.methodCall(destination: "org.example.Test1", path: "/org/example/Test1", interface: "org.example.Test1.Echo", member: "Echo")
    }

    @Test("the bytes written equal libdbus' own, and each side reads the other's", arguments: samples)
    func agreesWithLibdbus(_ value: DBusValue) throws {
        let arguments = [value, .uint32(1), .variant(value), .structure([value])]
        let ours = try message()
        #expect(try ours.appendWire(arguments))
        let theirs = try message()
        try theirs.appendWithIterators(arguments)
        #expect(try ours.withMarshalled { Array($0) } == theirs.withMarshalled { Array($0) })
        #expect(try ours.argumentsWithIterators() == arguments)
        #expect(try theirs.wireArguments() == arguments)
    }

    /// A record with a field of each kind a page of Recents or Favorites has, and one that is sent only when set.
    private struct Entry: VarDictRecord, Equatable {
        var id: UInt64 = 0
        var handle = ""
        var outgoing = false
        var schemes: [String] = []
        var note: String?
        static let context = "entry"
        // Not in key order: the wire's order is the keys' (`DBusValue.vardict` sorts them).
        static let fields: [RecordField<Entry>] = [.field("Id", \.id), .field("Handle", \.handle), .field("Outgoing", \.outgoing),
                                                   .field("Schemes", \.schemes), .optional("Note", \.note)]
    }

    @Test("records written straight to the wire are the bytes of their DBusValues, and read back")
    func recordsStraightToTheWire() async throws {
        try await withReceivedCall { call in
            for records in [[], [Entry()], [Entry(id: 7, handle: "+15551234567", outgoing: true, schemes: ["sip", "tel"], note: "héllo"),
                                            Entry(id: 8, handle: "x", note: nil)]] {
                let body = try #require(try EncodedRecords<Entry>.write(records))
                let direct = try #require(call.wireReply(signature: "aa{sv}", body: body))
                let libdbus = try call.iteratorReply([records.dbusValue])
                #expect(direct.signature == "aa{sv}")
                #expect(try direct.withMarshalled { Array($0) } == libdbus.withMarshalled { Array($0) })
                #expect(try [Entry](dbusValue: try direct.argumentsWithIterators()[0]) == records)
            }
        }
    }

    @Test("a record's a{sv} is its entries' dictionary and reads back; a key sent twice keeps its last value")
    func recordsAsOptionDictionaries() throws {
        let full = Entry(id: 7, handle: "+15551234567", outgoing: true, schemes: ["sip", "tel"], note: "héllo")
        for record in [Entry(), full] {
            #expect(record.dbusValue == .vardict(record.entries))
            #expect(try Entry(dbusValue: record.dbusValue) == record)
            #expect(try Entry(entries: record.entries) == record)
        }
        // A key sent twice: the last pair is the field's, as a dictionary of the pairs keeps it; unknown keys are ignored.
        let twice = DBusValue.dictionary(key: "s", value: "v", [(.string("Handle"), .variant(.string("first"))), (.string("Unknown"), .variant(.bool(true))),
                                                                (.string("Handle"), .variant(.string("last")))])
        #expect(try Entry(dbusValue: twice).handle == "last")
        // A mistyped field names its key; what is not an a{sv} says so.
        let mistyped = DBusValue.vardict(["Id": .uint64(1), "Outgoing": .string("yes")])
        #expect(throws: DBusError.invalidArgs("entry key 'Outgoing' must be of type 'b', got 's'")) { try Entry(dbusValue: mistyped) }
        #expect(throws: DBusError.invalidArgs("entry must be of type 'a{sv}', got 'as'")) {
            try Entry(dbusValue: .array(element: "s", [.string("Id")]))
        }
    }

    @Test("a reply written as bytes is the reply libdbus makes, byte for byte")
    func repliesAgreeWithLibdbus() async throws {
        try await withReceivedCall { call in
            for value in Self.samples {
                for arguments: [DBusValue] in [[value, .bool(true)], [.string("Alice Example"), .bool(false)], [value, .uint32(1), .variant(value)],
                                               [.structure([value])], [.array(element: "s", [.string("a")])]] {
                    let ours = try #require(try call.wireReply(arguments), "\(arguments)")
                    let theirs = try call.iteratorReply(arguments)
                    #expect(try ours.withMarshalled { Array($0) } == theirs.withMarshalled { Array($0) }, "\(arguments)")
                    #expect(ours.type == .methodReturn && ours.replySerial == call.serial && ours.destination == call.sender && !ours.expectsReply)
                }
            }
            // One plain value, or a variant of one, or none: the iterators are cheaper (`wireReply`).
            for value: DBusValue in [.string("Version"), .bool(true), .uint32(3), .objectPath("/a")] {
                #expect(try call.wireReply([value]) == nil)
                #expect(try call.wireReply([.variant(value)]) == nil)
            }
            #expect(try call.wireReply([]) == nil)
            // A unix fd travels beside the bytes: left to the iterators.
            #expect(try call.wireReply([.string("a"), .unixFD(try UnixFD(duplicating: 0))]) == nil)
        }
    }

    @Test("a signal written as bytes is the signal libdbus makes, byte for byte, addressed or not")
    func signalsAgreeWithLibdbus() throws {
        for value in Self.samples {
            for arguments: [DBusValue] in [[value, .bool(true)], [.string("Calls"), .vardict(["Calls": .array(element: "o", [])]), .array(element: "s", [])],
                                           [.objectPath("/org/example/Call/1"), .structure([value])]] {
                for destination: String? in [nil, ":1.42"] {
                    let ours = try #require(try Message.wireSignal(path: "/org/example/Test1", interface: "org.example.Test1", member: "Changed",
                                                                   arguments, destination: destination), "\(arguments)")
                    let theirs = try Message.signal(path: "/org/example/Test1", interface: "org.example.Test1", member: "Changed")
                    try theirs.appendWithIterators(arguments)
                    if let destination { try theirs.setDestination(destination) }
                    #expect(try ours.withMarshalled { Array($0) } == theirs.withMarshalled { Array($0) }, "\(arguments) to \(destination ?? "all")")
                    #expect(ours.type == .signal && ours.destination == destination && !ours.expectsReply && ours.serial == 0)
                }
            }
        }
        // One plain value or none: libdbus' own; a name libdbus refuses is refused as `signal` refuses it.
        #expect(try Message.wireSignal(path: "/a", interface: "org.example.Test1", member: "Changed", [.string("x")], destination: nil) == nil)
        #expect(try Message.wireSignal(path: "/a", interface: "org.example.Test1", member: "Changed", [], destination: nil) == nil)
        #expect(try Message.wireSignal(path: "/a", interface: "not an interface", member: "Changed", [.string("x"), .bool(true)], destination: nil) == nil)
        #expect(throws: DBusError.self) {
            try Message.signal(path: "/a", interface: "not an interface", member: "Changed", [.string("x"), .bool(true)], destination: nil)
        }
    }

    @Test("a method call written as bytes is the call libdbus makes, byte for byte, with or without destination and interface")
    func methodCallsAgreeWithLibdbus() throws {
        for value in Self.samples {
            for arguments: [DBusValue] in [[.string("org.monkeycall.Telephony1.Call"), .string("State")], [value, .bool(true)],
                                           [.string("3f2c…"), .vardict(["Handle": .string("+15551234567")])]] {
                for (destination, interface): (String?, String?) in [("org.example.Test1", "org.example.Test1.Echo"), (nil, "org.example.Test1.Echo"),
                                                                     ("org.example.Test1", nil)] {
                    let ours = try #require(try Message.wireMethodCall(destination: destination, path: "/org/example/Test1", interface: interface,
                                                                       member: "Echo", arguments), "\(arguments)")
                    let theirs = try Message.methodCall(destination: destination, path: "/org/example/Test1", interface: interface, member: "Echo")
                    try theirs.appendWithIterators(arguments)
                    #expect(try ours.withMarshalled { Array($0) } == theirs.withMarshalled { Array($0) }, "\(arguments)")
                    #expect(ours.type == .methodCall && ours.expectsReply && ours.serial == 0 && ours.member == "Echo")
                }
            }
        }
        #expect(try Message.wireMethodCall(destination: nil, path: "/a", interface: nil, member: "Ping", []) == nil)
        #expect(throws: DBusError.self) {
            try Message.methodCall(destination: "not a name!", path: "/a", interface: nil, member: "Echo", [.string("x"), .bool(true)])
        }
    }

    /// `body` given a method call as the server received it from the bus (with a sender and a
    /// serial, which a reply names), held until it returns.
    private func withReceivedCall(_ body: (Message) async throws -> Void) async throws {
        let fixture = try await Fixture()
        async let held = fixture.callEcho("Hold")
        #expect(await fixture.held.next() == fixture.client.uniqueName)
        let call = try #require(fixture.server.onQueueSync { fixture.deferred.first })
        try await body(call.message)
        #expect(try await fixture.callEcho("Release") == [.uint32(1)])
        #expect(try await held == [.bool(true)])
    }

    @Test("what libdbus would refuse is refused with the same errors")
    func refusals() throws {
        let mixed = DBusValue.array(element: "s", [.string("a"), .int32(1)])
        let ours = try message()
        let theirs = try message()
        let wireError = #expect(throws: DBusError.self) { try ours.appendWire([mixed]) }
        let iteratorError = #expect(throws: DBusError.self) { try theirs.appendWithIterators([mixed]) }
        #expect(wireError?.message == iteratorError?.message)
        #expect(throws: DBusError.self) { try message().appendWire([.array(element: "s", [.string("a\0b")])]) }
        #expect(throws: DBusError.self) { try message().appendWire([.dictionary(key: "v", value: "s", [])]) }
        // Unix fds travel beside the bytes: left to the iterators.
        #expect(try message().appendWire([.array(element: "h", [.unixFD(UnixFD(duplicating: 1))])]) == false)
        // So are a few plain values, which cost libdbus less than a second pass.
        #expect(try message().appendWire([.string("x"), .variant(.uint32(1))]) == false)
        // Nesting deeper than D-Bus allows: libdbus refuses the bytes, so the iterators say what is wrong.
        var deep = DBusValue.int32(1)
        for _ in 0..<70 { deep = .array(element: deep.signature, [deep]) }
        #expect(try message().appendWire([deep]) == false)
    }

    @Test("a big-endian message from GDBus is read correctly")
    func bigEndian() async throws {
        let fixture = try await Fixture()
        let script = """
        import sys
        from gi.repository import Gio, GLib
        bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        call = Gio.DBusMessage.new_method_call("org.example.Test1", "/org/example/Test1", "org.example.Test1.Echo", "Echo")
        value = GLib.Variant("(ynqiuxtdsogasa{sv})", (7, -2, 65000, -100000, 4000000000, -(2**40), 2**63, 0.5, "héllo", "/a/b", "a{sv}",
            ["x", "yz"], {"Nested": GLib.Variant("a{sv}", {"Leaf": GLib.Variant("t", 2**60)}), "Text": GLib.Variant("s", "t")}))
        call.set_body(GLib.Variant("(v)", (value,)))
        call.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
        assert call.to_blob(Gio.DBusCapabilityFlags.NONE)[0] == ord("B")
        reply, _ = bus.send_message_with_reply_sync(call, Gio.DBusSendMessageFlags.NONE, 5000, None)
        reply.to_gerror()
        echoed = reply.get_body().get_child_value(0).get_variant()
        print("same" if echoed == value else "different: %s" % echoed.print_(True))
        """
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, fixture.bus.address])
        #expect(result.stdout.contains("same"), "\(result.stdout)\(result.stderr)")
    }
}
