import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// One of each kind of object the service serves, alive, with the connection
/// that may act on it: the root, a provider, a ringing call and an open call
/// directory update. Made again (`renew`) whenever a test may have ended them.
final class FuzzTargets: @unchecked Sendable {
    enum Kind: String, CaseIterable {
        case root, provider, call, directoryUpdate
    }

    let daemon: FuzzedDaemon
    /// The app that owns the provider, the call and the update.
    private(set) var provider: FuzzProvider
    private(set) var call: String
    private(set) var update: ObjectPath
    /// The user's side for root methods: fuzzed input may register providers
    /// on it, so it is not the daemon's controller, and it is renewed too.
    private(set) var user: Connection
    /// A connection that owns nothing here.
    let stranger: Connection
    private var made = 0

    init(_ daemon: FuzzedDaemon) async throws {
        self.daemon = daemon
        stranger = try daemon.connect()
        user = try daemon.connect()
        (provider, call, update) = try await Self.make(daemon, 0)
    }

    private static func make(_ daemon: FuzzedDaemon, _ number: Int) async throws -> (FuzzProvider, String, ObjectPath) {
        let provider = try await FuzzProvider(daemon, name: "Fuzz\(number)")
        let call = try await provider.reportIncoming()
        guard case .objectPath(let update)? = try await provider.call("BeginCallDirectoryUpdate", [.bool(true)]).first else {
            throw TestSupportError("no directory update")
        }
        return (provider, call, update)
    }

    /// A new provider, call, update and user connection; the old connections close.
    func renew() async throws {
        made += 1
        let (oldProvider, oldUser) = (provider, user)
        (provider, call, update) = try await Self.make(daemon, made)
        user = try daemon.connect()
        oldProvider.connection.close()
        oldUser.close()
    }

    func path(_ kind: Kind) -> ObjectPath {
        switch kind {
        case .root: Telephony1.rootPath
        case .provider: provider.path
        case .call: Telephony1.callPath(call)
        case .directoryUpdate: update
        }
    }

    /// Who may act on the object: the provider's app for what it owns, else the user.
    func owner(_ kind: Kind) -> Connection {
        switch kind {
        case .root, .call: user
        case .provider, .directoryUpdate: provider.connection
        }
    }

    /// What each kind of object serves, from its live introspection.
    func interfaces() async throws -> [(kind: Kind, interfaces: [(name: String, shape: IntrospectionDocument.InterfaceShape)])] {
        var result: [(kind: Kind, interfaces: [(name: String, shape: IntrospectionDocument.InterfaceShape)])] = []
        for kind in Kind.allCases {
            let reply = try await daemon.controller.call(destination: Telephony1.busName, path: path(kind), interface: "org.freedesktop.DBus.Introspectable",
                                                         member: "Introspect", timeout: FuzzedDaemon.replyDeadline)
            guard case .string(let xml)? = reply.first else { throw TestSupportError("no introspection at \(path(kind))") }
            let served = try IntrospectionDocument(xml: xml).interfaces.sorted { $0.key < $1.key }.map { (name: $0.key, shape: $0.value) }
            result.append((kind, served))
        }
        let reached = Set(result.flatMap { $0.interfaces.map(\.name) })
        let missing = Set(try Self.contract().interfaces.keys).subtracting(reached)
        #expect(missing.isEmpty, "the fuzzer reaches no object serving \(missing.sorted()): add one to FuzzTargets")
        return result
    }

    /// The contract in `dbus/`.
    static func contract() throws -> IntrospectionDocument {
        try IntrospectionDocument(xml: String(contentsOf: contractURL, encoding: .utf8))
    }

    static var contractURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/org.monkeycall.Telephony1.xml")
    }
}
