import DBus
import FoundationEssentials
import MonkeyCallAPI

/// A typed client of `org.monkeycall.Telephony1`: the contract's methods and properties through
/// MonkeyCallAPI's specs, the service's objects, and its signals as events. Any thread may call
/// it; replies and signals arrive on the connection's queue.
public final class TelephonyClient: Sendable {
    public let connection: Connection

    public init(connection: Connection) {
        self.connection = connection
    }

    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`, or the one at `address`).
    public convenience init(address: String? = nil) throws {
        self.init(connection: try address.map { try Connection(address: $0) } ?? Connection.sessionBus())
    }

    /// Whether the service runs now.
    public func isRunning() async throws -> Bool {
        try await connection.nameOwner(Telephony1.busName) != nil
    }

    /// Whether the bus can start the service (its D-Bus service file is installed).
    public func isActivatable() async throws -> Bool {
        let reply = try await connection.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                                              member: "ListActivatableNames")
        return (try? [String](dbusValue: reply.first ?? .array(element: "s", [])))?.contains(Telephony1.busName) ?? false
    }

    /// Asks the bus to start the service by D-Bus activation; returns once it owns its name.
    public func start() async throws {
        try await connection.call(destination: Connection.busName, path: "/org/freedesktop/DBus", interface: Connection.busName,
                                  member: "StartServiceByName", [.string(Telephony1.busName), .uint32(0)])
    }

    /// Calls a method of the API (on the root object unless told otherwise) and returns its declared outputs.
    @discardableResult
    public func call<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, at path: ObjectPath = Telephony1.rootPath, _ arguments: repeat each I
    ) async throws -> (repeat each O) {
        try await connection.call(spec, destination: Telephony1.busName, path: path, repeat each arguments)
    }

    /// Reads a property of the API (of the root object unless told otherwise).
    public func get<T: DBusRepresentable>(_ spec: PropertySpec<T>, at path: ObjectPath = Telephony1.rootPath) async throws -> T {
        try await connection.get(spec, destination: Telephony1.busName, path: path)
    }

    /// Writes a property of the API (of the root object unless told otherwise).
    public func set<T: DBusRepresentable>(_ spec: PropertySpec<T>, _ value: T, at path: ObjectPath = Telephony1.rootPath) async throws {
        try await connection.set(spec, destination: Telephony1.busName, path: path, value)
    }

    /// Every property of one of the API's interfaces, through the standard Properties interface.
    public func allProperties(of interface: String, at path: ObjectPath = Telephony1.rootPath) async throws -> [String: DBusValue] {
        let reply = try await standardCall(path, "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)])
        return reply.first?.vardict ?? [:]
    }

    /// Objects below the root: (path, interface → properties).
    public func managedObjects() async throws -> [(ObjectPath, [String: [String: DBusValue]])] {
        Telephony1.managedObjects(in: try await standardCall(Telephony1.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
    }

    /// The calls there are now, oldest first.
    public func calls() async throws -> [CallSnapshot] {
        try await managedObjects().compactMap { path, interfaces in
            interfaces[Telephony1.Call.interface].map { CallSnapshot(path: path, properties: $0) }
        }.sorted { $0.startedAt < $1.startedAt }
    }

    /// The providers registered now, in the order they came.
    public func providers() async throws -> [ProviderSnapshot] {
        try await managedObjects().compactMap { path, interfaces -> ProviderSnapshot? in
            guard let properties = interfaces[Telephony1.Provider.interface] else { return nil }
            return ProviderSnapshot(path: path, properties: properties)
        }.sorted { (Telephony1.providerID(from: $0.path) ?? 0) < (Telephony1.providerID(from: $1.path) ?? 0) }
    }

    /// A call on a standard D-Bus interface of the service (ObjectManager, Properties), which has no spec.
    public func standardCall(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: Telephony1.busName, path: path, interface: interface, member: member, arguments)
    }

    /// Every signal the service sends this connection, and the service leaving and coming back,
    /// as events, until `Subscription` is cancelled. Call `Manager.Subscribe` after this (and
    /// again when `.serviceStarted` comes): the service sends its signals to subscribers only.
    public func events(_ handler: @escaping @Sendable (TelephonyEvent) -> Void) async throws -> [Subscription] {
        let changes = try await connection.subscribe(MatchRule(sender: Telephony1.busName, pathNamespace: Telephony1.rootPath)) { message in
            if let event = TelephonyEvent(message) { handler(event) }
        }
        let owners = try await connection.subscribe(MatchRule(sender: Connection.busName, interface: Connection.busName,
                                                              member: "NameOwnerChanged", arg0: Telephony1.busName)) { message in
            guard let arguments = try? message.arguments(), arguments.count == 3,
                  case .string(let oldOwner) = arguments[1], case .string(let newOwner) = arguments[2] else { return }
            if !oldOwner.isEmpty { handler(.serviceStopped) }
            if !newOwner.isEmpty { handler(.serviceStarted) }
        }
        return [changes, owners]
    }
}

extension TelephonyClient {
    /// `AddressBook.Search(query, limit)`. A service without the interface yet answers `UnknownMethod`
    /// (or `UnknownInterface`): thrown as it is, for the caller to say so.
    public func searchContacts(_ query: String, limit: UInt32 = 0) async throws -> [Contact] {
        let reply = try await connection.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.AddressBook.interface,
                                              member: Telephony1.AddressBook.search.name, [.string(query), .uint32(limit)])
        guard case .array(_, let items)? = reply.first else { return [] }
        return items.compactMap { $0.vardict.map(Contact.init) }
    }
}
