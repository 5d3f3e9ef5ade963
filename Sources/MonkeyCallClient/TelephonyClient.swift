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

/// A call object's properties, read through the contract's specs.
public struct CallSnapshot: Sendable, Equatable {
    public let path: ObjectPath
    public var properties: [String: DBusValue]

    public init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        self.properties = properties
    }

    public subscript<T: DBusRepresentable>(_ property: PropertySpec<T>) -> T? {
        properties[property.name].flatMap { try? T(dbusValue: $0.unwrappedVariant) }
    }

    public var uuid: String { self[Telephony1.Call.uuid] ?? "" }
    public var state: String { self[Telephony1.Call.state] ?? "" }
    public var handle: String { self[Telephony1.Call.handle] ?? "" }
    public var callerName: String { self[Telephony1.Call.callerName] ?? "" }
    public var providerName: String { self[Telephony1.Call.providerName] ?? "" }
    public var outgoing: Bool { self[Telephony1.Call.outgoing] ?? false }
    public var onHold: Bool { self[Telephony1.Call.onHold] ?? false }
    public var muted: Bool { self[Telephony1.Call.muted] ?? false }
    public var silenced: Bool { self[Telephony1.Call.silenced] ?? false }
    public var hasEnded: Bool { self[Telephony1.Call.hasEnded] ?? false }
    public var supportsHolding: Bool { self[Telephony1.Call.supportsHolding] ?? true }
    public var supportsGrouping: Bool { self[Telephony1.Call.supportsGrouping] ?? false }
    public var group: String { self[Telephony1.Call.group] ?? "" }
    public var provider: ObjectPath? { self[Telephony1.Call.provider] }
    public var supportsDTMF: Bool { self[Telephony1.Call.supportsDTMF] ?? true }
    public var startedAt: UInt64 { self[Telephony1.Call.startedAt] ?? 0 }
    public var connectedAt: UInt64 { self[Telephony1.Call.connectedAt] ?? 0 }
    public var endedAt: UInt64 { self[Telephony1.Call.endedAt] ?? 0 }
}

/// A provider object's properties.
public struct ProviderSnapshot: Sendable, Equatable {
    public let path: ObjectPath
    public let properties: [String: DBusValue]

    public init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        self.properties = properties
    }

    public var name: String { properties[Telephony1.Provider.name.name].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
    public var appID: String { properties[Telephony1.Provider.appId.name].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
    public var configuration: [String: DBusValue] { properties[Telephony1.Provider.configuration.name]?.unwrappedVariant.vardict ?? [:] }
    /// The handle types it calls (all three when it did not say).
    public var handleTypes: [String] {
        configuration[Telephony1.Key.supportedHandleTypes].flatMap { try? [String](dbusValue: $0.unwrappedVariant) } ?? Telephony1.HandleTypes.all
    }
}

/// What the service tells a subscriber, decoded.
public enum TelephonyEvent: Sendable, Equatable {
    /// A call or provider appeared (`InterfacesAdded`): its path and properties.
    case added(ObjectPath, [String: DBusValue])
    /// Properties of an object changed (`PropertiesChanged`; the root's `MissedCount` too).
    case changed(ObjectPath, interface: String, [String: DBusValue])
    /// A call or provider went (`InterfacesRemoved`).
    case removed(ObjectPath)
    /// `Recents.EntryAdded`.
    case recentAdded(Telephony1.RecentEntry)
    /// `AddressBook.Changed`.
    case contactsChanged
    case serviceStopped
    case serviceStarted

    init?(_ message: Message) {
        guard let path = message.path, let arguments = try? message.arguments() else { return nil }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard arguments.count == 2, case .objectPath(let object) = arguments[0], case .dictionary(_, _, let interfaces) = arguments[1] else { return nil }
            var fields: [String: DBusValue] = [:]
            for interface in interfaces { fields.merge(interface.value.vardict ?? [:]) { $1 } }
            self = .added(object, fields)
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard case .objectPath(let object)? = arguments.first else { return nil }
            self = .removed(object)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard arguments.count >= 2, case .string(let interface) = arguments[0], let changed = arguments[1].vardict else { return nil }
            self = .changed(path, interface: interface, changed)
        case (Telephony1.Recents.interface, Telephony1.Recents.entryAdded.name):
            guard let fields = arguments.first?.vardict, let entry = try? Telephony1.RecentEntry(entries: fields) else { return nil }
            self = .recentAdded(entry)
        case (Telephony1.AddressBook.interface, Telephony1.AddressBook.changed.name):
            self = .contactsChanged
        default:
            return nil
        }
    }
}


/// One contact of `AddressBook.Search`.
public struct Contact: Sendable, Equatable {
        public var id: String
        public var name: String
        /// (label, number as written).
        public var numbers: [(label: String, number: String)]
        public var isFavorite: Bool

        public init(id: String, name: String, numbers: [(label: String, number: String)], isFavorite: Bool) {
            (self.id, self.name, self.numbers, self.isFavorite) = (id, name, numbers, isFavorite)
        }

        public init(_ fields: [String: DBusValue]) {
            func string(_ key: String) -> String { fields[key].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
            id = string("Id")
            name = string("Name")
            isFavorite = fields["IsFavorite"].flatMap { try? Bool(dbusValue: $0.unwrappedVariant) } ?? false
            var numbers: [(String, String)] = []
            if case .array(_, let items)? = fields["Numbers"]?.unwrappedVariant {
                for item in items {
                    if case .structure(let members) = item, members.count == 2, case .string(let label) = members[0], case .string(let number) = members[1] {
                        numbers.append((label, number))
                    }
                }
            }
            self.numbers = numbers
        }

        public static func == (lhs: Contact, rhs: Contact) -> Bool {
            lhs.id == rhs.id && lhs.name == rhs.name && lhs.isFavorite == rhs.isFavorite
                && lhs.numbers.map(\.label) == rhs.numbers.map(\.label) && lhs.numbers.map(\.number) == rhs.numbers.map(\.number)
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
