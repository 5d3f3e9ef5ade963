import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

/// The CLI's view of the service: calls and providers read from the ObjectManager.
struct ServiceClient {
    let connection: Connection

    init(_ options: BusOptions) async throws {
        do {
            connection = try options.address.map { try Connection(address: $0) } ?? Connection.sessionBus()
        } catch let error as DBusError {
            throw CLIError("cannot reach the session bus: \(error.message)")
        }
        // Not running is fine when the bus can start it (D-Bus activation after scripts/install).
        var available = try await connection.nameOwner(Telephony1.busName) != nil
        if !available { available = try await isActivatable() }
        guard available else {
            throw CLIError("the MonkeyCall service is not running on this bus (nobody owns \(Telephony1.busName)); start it with scripts/run or monkeycalld")
        }
    }

    private func isActivatable() async throws -> Bool {
        let reply = try await connection.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                                              member: "ListActivatableNames")
        return (try? [String](dbusValue: reply.first ?? .array(element: "s", [])))?.contains(Telephony1.busName) ?? false
    }

    struct CallInfo {
        let path: ObjectPath
        /// The call's `Telephony1.Call` properties.
        let properties: [String: DBusValue]
        /// A string property of the call; "" when absent.
        func string(_ property: PropertySpec<String>) -> String { properties[property] ?? "" }
        var uuid: String { string(Telephony1.Call.uuid) }
        var state: String { string(Telephony1.Call.state) }
    }

    /// Objects below the root: (path, interface → properties).
    func managedObjects() async throws -> [(ObjectPath, [String: [String: DBusValue]])] {
        let reply = try await standardCall(Telephony1.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { return [] }
        return objects.compactMap { entry in
            guard case .objectPath(let path) = entry.key, case .dictionary(_, _, let interfaces) = entry.value else { return nil }
            var result: [String: [String: DBusValue]] = [:]
            for interface in interfaces {
                if case .string(let name) = interface.key { result[name] = interface.value.vardict ?? [:] }
            }
            return (path, result)
        }
    }

    func calls() async throws -> [CallInfo] {
        try await managedObjects().compactMap { path, interfaces in
            interfaces[Telephony1.Call.interface].map { CallInfo(path: path, properties: $0) }
        }.sorted { ($0.properties[Telephony1.Call.startedAt] ?? 0) < ($1.properties[Telephony1.Call.startedAt] ?? 0) }
    }

    func providers() async throws -> [(path: ObjectPath, name: String)] {
        try await managedObjects().compactMap { path, interfaces in
            guard let name = interfaces[Telephony1.Provider.interface]?[Telephony1.Provider.name] else { return nil }
            return (path, name)
        }
    }

    /// The call the user means: the given UUID, or the only call (that fits `filter`).
    func resolveCall(_ uuid: String?, purpose: String, filter: (CallInfo) -> Bool = { _ in true }) async throws -> String {
        if let uuid { return uuid }
        let candidates = try await calls().filter(filter)
        switch candidates.count {
        case 1: return candidates[0].uuid
        case 0: throw CLIError("there is no call to \(purpose)")
        default:
            throw CLIError("there are \(candidates.count) calls to \(purpose); name one: " + candidates.map(\.uuid).joined(separator: ", "))
        }
    }

    /// Calls a method of the API (on the root object unless told otherwise) and returns its declared outputs.
    @discardableResult
    func call<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, at path: ObjectPath = Telephony1.rootPath, _ arguments: repeat each I
    ) async throws -> (repeat each O) {
        do {
            return try await connection.call(spec, destination: Telephony1.busName, path: path, repeat each arguments)
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }

    /// Reads a property of the API (of the root object unless told otherwise).
    func get<T: DBusRepresentable>(_ spec: PropertySpec<T>, at path: ObjectPath = Telephony1.rootPath) async throws -> T {
        do {
            return try await connection.get(spec, destination: Telephony1.busName, path: path)
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }

    /// Writes a property of the API (of the root object unless told otherwise).
    func set<T: DBusRepresentable>(_ spec: PropertySpec<T>, _ value: T, at path: ObjectPath = Telephony1.rootPath) async throws {
        do {
            try await connection.set(spec, destination: Telephony1.busName, path: path, value)
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }

    /// Every property of one of the API's interfaces (of the root object unless told otherwise), through
    /// the standard Properties interface.
    func allProperties(of interface: String, at path: ObjectPath = Telephony1.rootPath) async throws -> [String: DBusValue] {
        let reply = try await standardCall(path, "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)])
        return reply.first?.vardict ?? [:]
    }

    /// A call on a standard D-Bus interface of the service (ObjectManager, Properties), which has no spec.
    private func standardCall(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        do {
            return try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member, arguments)
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }
}

extension [String: DBusValue] {
    /// A declared property's value in a dictionary of properties (`GetAll`, `GetManagedObjects`,
    /// `PropertiesChanged`); nil when absent or of another type.
    subscript<T: DBusRepresentable>(_ property: PropertySpec<T>) -> T? {
        self[property.name].flatMap { try? T(dbusValue: $0) }
    }
}

/// A message for the user; the process exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// The service's error in plain words: its message, and the error's short name.
    init(_ error: DBusError) {
        let shortName = error.name.split(separator: ".").last.map(String.init) ?? error.name
        description = "\(error.message.isEmpty ? shortName : error.message) (\(shortName))"
    }
}
