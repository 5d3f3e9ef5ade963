import Synchronization

/// An object an `ObjectServer` serves at a path, with its interfaces.
/// Create with `ObjectServer.export`; signals and property changes go out through it.
public final class ExportedObject: Sendable {
    public let path: ObjectPath
    /// The interfaces, whose handlers run on the connection's queue.
    private let declared: UncheckedSendable<[Interface]>
    public var interfaces: [Interface] { declared.value }
    /// Whether an object manager above it lists it (`GetManagedObjects`, `InterfacesAdded`): false
    /// for an object served beside the managed ones, such as a desktop interface at a fixed path.
    public let isManaged: Bool
    private weak let server: ObjectServer?
    /// The connection the object belongs to, as the access policy said when it was exported: it
    /// hears the object's signals, to the last one (after the object is gone from the policy's view).
    let owner: Caller?
    /// Whether a reader may see any of the object's properties differently from another.
    let variesByReader: Bool

    init(path: ObjectPath, interfaces: [Interface], isManaged: Bool, owner: Caller?, server: ObjectServer) {
        self.path = path
        self.declared = UncheckedSendable(interfaces)
        self.isManaged = isManaged
        self.owner = owner
        self.server = server
        self.variesByReader = interfaces.contains { $0.properties.contains(where: \.variesByReader) }
    }

    public func interface(_ name: String) -> Interface? { interfaces.first { $0.name == name } }

    /// Emits a declared signal, to its audience (see `SignalAudience`) or to one destination. The
    /// arguments must match the declaration.
    public func emit(_ signalName: String, on interfaceName: String, _ arguments: [DBusValue] = [], to destination: String? = nil) throws(DBusError) {
        guard let signal = interface(interfaceName)?.signal(signalName) else {
            throw DBusError.failed("\(path) does not declare signal \(interfaceName).\(signalName)")
        }
        let signature = Signature(concatenating: arguments.map(\.signature))
        guard signature == signal.signature else {
            throw DBusError.failed("signal \(signalName) takes '\(signal.signature)', not '\(signature)'")
        }
        guard let server else { return }
        if let destination {
            try server.connection.emit(path: path, interface: interfaceName, member: signalName, arguments, destination: destination)
        } else {
            try server.connection.onQueueSync { () throws(DBusError) in
                try server.emit(path: path, interface: interfaceName, member: signalName, owner: owner, concerning: interfaceName) { _ in arguments }
            }
        }
    }

    /// Emits `PropertiesChanged` for the named properties with their current values (as each
    /// recipient may see them, for a property that varies by reader).
    public func propertiesChanged(_ names: [String], on interfaceName: String) {
        guard let interface = interface(interfaceName) else { return }
        let properties = names.compactMap { interface.property($0) }.filter { $0.changeSignal != .none }
        guard !properties.isEmpty, let server else { return }
        let invalidated = properties.filter { $0.changeSignal == .invalidates }.map(\.name)
        // What every reader sees alike is read once, not once per recipient.
        var alike: [String: DBusValue] = [:]
        for property in properties where property.changeSignal == .value && !property.variesByReader { alike[property.name] = try? property.getter(path, nil) }
        func arguments(_ reader: Caller?) -> [DBusValue] {
            var changed = alike
            for property in properties where property.changeSignal == .value && property.variesByReader { changed[property.name] = try? property.getter(path, reader) }
            return [.string(interfaceName), .vardict(changed), invalidated.dbusValue]
        }
        server.connection.onQueueSync {
            try? server.emit(path: path, interface: StandardInterfaces.properties, member: "PropertiesChanged", owner: owner,
                             concerning: interfaceName, variesByReader: properties.contains(where: \.variesByReader), arguments)
        }
    }

    /// Every readable property of an interface (`GetAll`), as `reader` may see them.
    /// `announcing`: for InterfacesAdded, which leaves out the properties whose changes are only
    /// announced as invalidated (`changeSignal: .invalidates`): values too big to copy to every
    /// listener unasked, read with Get by whoever wants them.
    func allProperties(of interface: Interface, for reader: Caller?, announcing: Bool = false) throws -> DBusValue {
        try allProperties(of: interface, for: reader, alike: try propertiesAlike(of: interface, announcing: announcing), announcing: announcing)
    }

    /// The properties of `interface` that every reader sees alike, read once for all the
    /// recipients of a signal (`allProperties(of:for:alike:announcing:)` adds each one's own).
    func propertiesAlike(of interface: Interface, announcing: Bool) throws -> [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        values.reserveCapacity(interface.properties.count)
        for property in interface.properties where !property.variesByReader && !(announcing && property.changeSignal == .invalidates) {
            values[property.name] = try property.getter(path, nil)
        }
        return values
    }

    /// `alike`, with the properties that vary by reader as `reader` sees them.
    func allProperties(of interface: Interface, for reader: Caller?, alike: [String: DBusValue], announcing: Bool) throws -> DBusValue {
        var values = alike
        for property in interface.properties where property.variesByReader && !(announcing && property.changeSignal == .invalidates) {
            values[property.name] = try property.getter(path, reader)
        }
        return .vardict(values)
    }
}

/// The objects a server serves; lives on the connection's queue.
struct ObjectTree {
    var objects: [ObjectPath: ExportedObject] = [:]
    /// Paths that implement `org.freedesktop.DBus.ObjectManager` for the objects below them.
    var managers: Set<ObjectPath> = [] {
        // An object that becomes a manager serves `ObjectManager` too (rare: once, at start).
        didSet { served = [:] }
    }
    /// The interfaces served at each object's path, standard ones included: built on first use
    /// (calls are the hot path), again only if the object becomes an object manager. An entry is
    /// for the object at its path now: export and unexport remove it.
    var served: [ObjectPath: [Interface]] = [:] {
        didSet { lastServed = nil }
    }
    /// The entry of `served` found last: the next call to the same object (its path the same
    /// String, `Message.path(reusing:)`) finds it without hashing the path; dropped with any change.
    var lastServed: (path: ObjectPath, interfaces: [Interface])?

    /// The names of the nodes directly below `path`.
    func children(of path: ObjectPath) -> [String] {
        var names = Set<String>()
        let depth = path.elements.count
        for candidate in objects.keys where candidate.isDescendant(of: path) {
            names.insert(String(candidate.elements[depth]))
        }
        return names.sorted()
    }

    func hasDescendants(_ path: ObjectPath) -> Bool {
        objects.keys.contains { $0.isDescendant(of: path) }
    }

    func managers(above path: ObjectPath) -> [ObjectPath] {
        managers.filter { path.isDescendant(of: $0) }
    }
}
