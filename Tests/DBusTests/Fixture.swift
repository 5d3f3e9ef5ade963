import DBus
import DBusTestSupport
import Foundation
import Testing

/// A private bus with a server connection that exports a test object, and a client.
final class Fixture: @unchecked Sendable {
    static let name = "org.example.Test1"
    static let interface = "org.example.Test1.Echo"
    static let path: ObjectPath = "/org/example/Test1"

    let bus: PrivateBus
    let server: Connection
    /// The server's objects.
    let objects: ObjectServer
    let client: Connection
    var version = "1.0"
    var volume: Int32 = 5
    var deferred: [MethodCall] = []
    /// One entry each time the server starts holding a call.
    let held = EventBuffer<String>()

    init() async throws {
        bus = try await PrivateBus.start()
        server = try Connection(address: bus.address)
        client = try Connection(address: bus.address)
        objects = ObjectServer(connection: server)
        try objects.export(Fixture.path, [echoInterface(), typedInterface()])
        objects.addObjectManager(at: Fixture.path)
        #expect(try await server.requestName(Fixture.name) == .primaryOwner)
    }

    // Released with the fixture: the bus stops on a thread of its own (PrivateBus.deinit).

    struct Refused: DBusErrorConvertible {
        var dbusError: DBusError { DBusError(name: "org.example.Test1.Error.Refused", message: "refused on purpose") }
    }

    func echoInterface() -> Interface {
        Interface(Fixture.interface) {
            Method("Echo", in: ["value": "v"], out: ["value": "v"]) { call in
                .values([.variant(try call.decode(DBusValue.self))])
            }
            Method("Concat", in: ["a": "s", "b": "i", "options": "a{sv}"], out: ["joined": "s"]) { call in
                let (a, b, options) = try call.decode(String.self, Int32.self, [String: DBusValue].self)
                let suffix = try VarDict(options, context: "options").get("Suffix", default: "")
                return .values([.string("\(a)\(b)\(suffix)")])
            }
            Method("Refuse") { _ in throw Refused() }
            Method("Hold", out: ["released": "b"]) { [unowned self] call in
                deferred.append(call)
                held.append(call.sender)
                return .later
            }
            Method("Release", out: ["count": "u"]) { [unowned self] _ in
                let waiting = deferred
                deferred = []
                // Reply from another thread: replies may come from anywhere.
                DispatchQueue.global().async { waiting.forEach { $0.reply([.bool(true)]) } }
                return .values([.uint32(UInt32(waiting.count))])
            }
            Method("WriteTo", in: ["fd": "h", "text": "s"]) { call in
                let (fd, text) = try call.decode(UnixFD.self, String.self)
                _ = text.withCString { write(fd.rawValue, $0, strlen($0)) }
                return .empty
            }
            Property("Version", "s") { [unowned self] in .string(version) }
            Property("Volume", "i", set: { [unowned self] value, _ in
                let newValue = try Int32(dbusValue: value)
                guard (0...10).contains(newValue) else { throw DBusError.invalidArgs("Volume must be 0 to 10") }
                volume = newValue
            }) { [unowned self] in .int32(volume) }
            Signal("Ping", ["text": "s"])
        }
    }

    /// Methods declared by specs, whose handlers read their arguments themselves (`Args.read`).
    enum Typed {
        static let interface = "org.example.Test1.Typed"
        static let echo = MethodSpec(interface, "Echo", in: Arg("value", DBusValue.self), out: Arg("value", DBusValue.self),
                                     doc: "Sends the value back.")
        static let writeTo = MethodSpec(interface, "WriteTo", in: Arg("fd", UnixFD.self), Arg("text", String.self),
                                        out: Arg("bytes", UInt32.self), doc: "Writes the text through the descriptor.")
    }

    func typedInterface() -> Interface {
        let gone = DBusError.failed("the fixture is gone")
        return Interface(Typed.interface) {
            Method(Typed.echo, owner: self, gone: gone) { _, _, value in value }
            Method(Typed.writeTo, owner: self, gone: gone) { _, _, fd, text in
                UInt32(max(0, text.withCString { write(fd.rawValue, $0, strlen($0)) }))
            }
        }
    }

    @discardableResult
    /// A call with libdbus's reply timeout (25 s), stretched under ThreadSanitizer.
    func callEcho(_ member: String, _ arguments: [DBusValue] = [], path: ObjectPath = Fixture.path,
                  interface: String = Fixture.interface, timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        try await client.call(destination: Fixture.name, path: path, interface: interface, member: member, arguments,
                              timeout: Deadlines.stretched(timeout))
    }

    @discardableResult
    func properties(_ member: String, _ arguments: [DBusValue], path: ObjectPath = Fixture.path) async throws -> [DBusValue] {
        try await client.call(destination: Fixture.name, path: path, interface: "org.freedesktop.DBus.Properties", member: member, arguments)
    }
}

/// Runs `body` and returns the D-Bus error it threw.
func dbusError(_ body: () async throws -> Void) async -> DBusError? {
    do {
        try await body()
        return nil
    } catch let error as DBusError {
        return error
    } catch {
        return DBusError(error)
    }
}
