/// An object this connection serves at a path, with its interfaces.
/// Create with `Connection.export`; signals and property changes go out through it.
public final class ExportedObject: @unchecked Sendable {
    public let path: ObjectPath
    public let interfaces: [Interface]
    /// Whether an object manager above it lists it (`GetManagedObjects`, `InterfacesAdded`): false
    /// for an object served beside the managed ones, such as a desktop interface at a fixed path.
    public let isManaged: Bool
    private weak var connection: Connection?
    /// The interfaces served at the path, standard ones included; built on first use, on the queue.
    var served: (isManager: Bool, interfaces: [Interface])?
    /// The connection the object belongs to, as the access policy said when it was exported: it
    /// hears the object's signals, to the last one (after the object is gone from the policy's view).
    var owner: Caller?

    init(path: ObjectPath, interfaces: [Interface], isManaged: Bool, connection: Connection) {
        self.path = path
        self.interfaces = interfaces
        self.isManaged = isManaged
        self.connection = connection
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
        guard let connection else { return }
        if let destination {
            try connection.emit(path: path, interface: interfaceName, member: signalName, arguments, destination: destination)
        } else {
            try connection.onQueueSync { () throws(DBusError) in
                try connection.emit(path: path, interface: interfaceName, member: signalName, owner: owner, concerning: interfaceName) { _ in arguments }
            }
        }
    }

    /// Emits `PropertiesChanged` for the named properties with their current values (as each
    /// recipient may see them, for a property that varies by reader).
    public func propertiesChanged(_ names: [String], on interfaceName: String) {
        guard let interface = interface(interfaceName) else { return }
        let properties = names.compactMap { interface.property($0) }.filter { $0.changeSignal != .none }
        guard !properties.isEmpty, let connection else { return }
        let invalidated = properties.filter { $0.changeSignal == .invalidates }.map(\.name)
        func arguments(_ reader: Caller?) -> [DBusValue] {
            var changed: [String: DBusValue] = [:]
            for property in properties where property.changeSignal == .value { changed[property.name] = try? property.getter(reader) }
            return [.string(interfaceName), .vardict(changed), invalidated.dbusValue]
        }
        connection.onQueueSync {
            try? connection.emit(path: path, interface: StandardInterfaces.properties, member: "PropertiesChanged", owner: owner,
                                 concerning: interfaceName, variesByReader: properties.contains(where: \.variesByReader), arguments)
        }
    }

    /// Every readable property of an interface (`GetAll`), as `reader` may see them.
    /// `announcing`: for InterfacesAdded, which leaves out the properties whose changes are only
    /// announced as invalidated (`changeSignal: .invalidates`): values too big to copy to every
    /// listener unasked, read with Get by whoever wants them.
    func allProperties(of interface: Interface, for reader: Caller?, announcing: Bool = false) throws -> DBusValue {
        var values: [String: DBusValue] = [:]
        for property in interface.properties where !(announcing && property.changeSignal == .invalidates) {
            values[property.name] = try property.getter(reader)
        }
        return .vardict(values)
    }

    /// Whether a reader may see any of the object's properties differently from another.
    var variesByReader: Bool { interfaces.contains { $0.properties.contains(where: \.variesByReader) } }
}

/// The objects a connection serves; lives on the connection's queue.
struct ObjectTree {
    var objects: [ObjectPath: ExportedObject] = [:]
    /// Paths that implement `org.freedesktop.DBus.ObjectManager` for the objects below them.
    var managers: Set<ObjectPath> = []

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

extension Connection {
    /// Serves `interfaces` at `path`. Objects below an object manager are
    /// announced with `InterfacesAdded`, unless `managed` is false: then no object manager lists it.
    @discardableResult
    public func export(_ path: ObjectPath, _ interfaces: [Interface], managed: Bool = true) throws(DBusError) -> ExportedObject {
        try onQueueSync { () throws(DBusError) -> ExportedObject in
            guard objects.objects[path] == nil else { throw DBusError.failed("an object is already exported at \(path)") }
            let object = ExportedObject(path: path, interfaces: interfaces, isManaged: managed, connection: self)
            object.owner = owner(of: path)
            objects.objects[path] = object
            for manager in objects.managers(above: path) where managed {
                try? emit(path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesAdded", owner: object.owner,
                          concerning: StandardInterfaces.objectManager, variesByReader: object.variesByReader) { reader in
                    var added: [(key: DBusValue, value: DBusValue)] = []
                    for interface in interfaces {
                        added.append((key: .string(interface.name), value: (try? object.allProperties(of: interface, for: reader, announcing: true)) ?? .vardict([:])))
                    }
                    return [.objectPath(path), .dictionary(key: "s", value: "a{sv}", added)]
                }
            }
            return object
        }
    }

    /// Stops serving the object at `path`, announcing `InterfacesRemoved`.
    public func unexport(_ path: ObjectPath) {
        onQueue {
            guard let object = self.objects.objects.removeValue(forKey: path) else { return }
            for manager in self.objects.managers(above: path) where object.isManaged {
                try? self.emit(path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesRemoved",
                               owner: object.owner, concerning: StandardInterfaces.objectManager) { _ in
                    [.objectPath(path), object.interfaces.map(\.name).dbusValue]
                }
            }
        }
    }

    /// Makes the object at `path` an `org.freedesktop.DBus.ObjectManager` for everything below it.
    public func addObjectManager(at path: ObjectPath) {
        onQueueSync { _ = objects.managers.insert(path) }
    }

    public func exportedObject(at path: ObjectPath) -> ExportedObject? {
        onQueueSync { objects.objects[path] }
    }

    func onQueueSync<T>(_ work: () throws(DBusError) -> T) throws(DBusError) -> T {
        if isOnQueue { return try work() }
        return try withoutActuallyEscaping(work) { (work) throws(DBusError) -> T in
            let box = UncheckedSendable(work)
            let result = queue.sync { () -> UncheckedSendable<Result<T, DBusError>> in
                do throws(DBusError) { return UncheckedSendable(.success(try box.value())) } catch { return UncheckedSendable(.failure(error)) }
            }
            return try result.value.get()
        }
    }

    /// Runs `work` on the queue and waits for it (at once when already there).
    public func onQueueSync<T>(_ work: () -> T) -> T {
        if isOnQueue { return work() }
        return withoutActuallyEscaping(work) { work in
            let box = UncheckedSendable(work)
            return queue.sync { UncheckedSendable(box.value()) }.value
        }
    }
}
