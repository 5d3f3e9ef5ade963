import DBus
import Foundation
import MonkeyCallAPI

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` for each of `0..<count` with at most `limit` in flight and
/// returns the results in index order.
func mapConcurrently<T: Sendable>(_ count: Int, limit: Int, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
        var results = [T?](repeating: nil, count: count)
        var next = 0
        func start() {
            let index = next
            next += 1
            group.addTask { (index, try await body(index)) }
        }
        while next < min(limit, count) { start() }
        while let (index, result) = try await group.next() {
            results[index] = result
            if next < count { start() }
        }
        return results.map { $0! }
    }
}

extension Duration {
    var microseconds: Double { Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12 }
    var seconds: Double { microseconds / 1e6 }
}

/// Calls to the service with the names spelled once.
extension Connection {
    @discardableResult
    func telephony<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, _ arguments: repeat each I, at path: ObjectPath = Telephony1.rootPath
    ) async throws -> (repeat each O) {
        try await call(spec, destination: Telephony1.busName, path: path, repeat each arguments)
    }

    /// Reads `Manager.Version`: a property read that does no work.
    @discardableResult
    func version() async throws -> [DBusValue] {
        [.string(try await get(Telephony1.Manager.version, destination: Telephony1.busName, path: Telephony1.rootPath))]
    }

    /// A round trip to `destination`'s root object that does no work (`Peer.Ping`).
    @discardableResult
    func ping(_ destination: String, at path: ObjectPath = Telephony1.rootPath) async throws -> [DBusValue] {
        try await call(destination: destination, path: path, interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    /// Registers a provider called `name` and returns its path.
    func registerProvider(_ name: String) async throws -> ObjectPath {
        try await telephony(Telephony1.Manager.registerProvider, [Telephony1.Key.name: .string(name)])
    }
}

extension UUID {
    /// A UUID the bench holds as the API's text (made as `UUID().uuidString.lowercased()`, or read
    /// off a signal), for the Provider's methods that take a `UUID`.
    static func bench(_ text: String) throws -> UUID {
        guard let uuid = UUID(apiString: text) else { throw BenchError("'\(text)' is not a UUID") }
        return uuid
    }
}
