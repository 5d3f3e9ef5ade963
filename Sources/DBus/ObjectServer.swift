import Dispatch

/// The objects a connection serves: the exported objects, the dispatch of incoming method calls
/// to them, and who hears their signals, all behind one access-policy check per message
/// (`setAccessPolicy`). Created for a connection, beside it: from then on the connection hands
/// it every incoming method call. Keep it (it keeps its connection); when it is released, the
/// connection serves nothing again.
///
/// Its state lives on the connection's queue, where handlers, getters and setters run; the
/// public methods may be called from any thread.
public final class ObjectServer: Sendable {
    public let connection: Connection
    private let confined = UncheckedSendable(State())
    /// On the connection's queue only.
    var state: State { confined.value }

    /// What the server changes, on the connection's queue.
    final class State {
        var objects = ObjectTree()
        /// Who is behind each caller, and the policy that uses it (`setAccessPolicy`).
        var callers = CallerRegistry()
        /// Who hears signals when there is an access policy.
        var audience = SignalAudience()
        /// The owners of the names whose owners may always subscribe (`reserveSubscriptions`).
        var reservedOwnersWatch: Subscription?
        /// The most entries an `a{sv}` argument of an incoming call may have (`limitVariantDictionaries`).
        var maximumVariantDictionaryEntries = Int.max
        /// The most elements an array argument of an incoming call may have (`limitArrays`).
        var maximumArrayElements = Int.max
        /// The most bytes the arguments of an incoming call may take, unless its method says more (`limitArgumentBytes`).
        var maximumArgumentBytes = Int.max
        /// The path of the last call handled: the next call to the same object reuses its String.
        var lastPath: ObjectPath?
    }

    /// Serves objects on `connection`: it hands this every incoming method call from now on
    /// (one server per connection: a later one takes over).
    public init(connection: Connection) {
        self.connection = connection
        connection.serveMethodCalls { [weak self] message in
            guard let self else { return false }
            self.handleMethodCall(message)
            return true
        }
    }

    public var queue: DispatchQueue { connection.queue }

    // MARK: Bounds of incoming calls

    /// Incoming calls whose `a{sv}` arguments (at any depth) have more than `entries` entries are
    /// refused with InvalidArgs as they are read, before the rest is decoded.
    public func limitVariantDictionaries(to entries: Int) {
        connection.onQueueSync { state.maximumVariantDictionaryEntries = entries }
    }

    /// Incoming calls whose array arguments (at any depth) have more than `elements` elements are
    /// refused with InvalidArgs as they are read: the work one call can make is bounded.
    public func limitArrays(to elements: Int) {
        connection.onQueueSync { state.maximumArrayElements = elements }
    }

    /// Incoming calls whose arguments take more than `bytes` on the wire (unless their method
    /// declares a bound of its own, `MethodSpec.maximumArgumentBytes`) are refused with
    /// InvalidArgs from the message's header, before anything is decoded.
    public func limitArgumentBytes(to bytes: Int) {
        connection.onQueueSync { state.maximumArgumentBytes = bytes }
    }

    /// Under an access policy, each account's calls (`Caller.account`) may take `burst` bytes on
    /// the wire, then `perSecond`; past that they are refused with LimitsExceeded before anything of
    /// them is read (`ArgumentBytesBudget`).
    public func limitArgumentBytesPerAccount(burst: Int, perSecond: Int) {
        connection.onQueueSync { state.callers.argumentBytes = ArgumentBytesBudget(burst: burst, perSecond: perSecond) }
    }

    // MARK: Objects

    /// Serves `interfaces` at `path`. Objects below an object manager are
    /// announced with `InterfacesAdded`, unless `managed` is false: then no object manager lists it.
    @discardableResult
    public func export(_ path: ObjectPath, _ interfaces: [Interface], managed: Bool = true) throws(DBusError) -> ExportedObject {
        try connection.onQueueSync { () throws(DBusError) -> ExportedObject in
            guard state.objects.objects[path] == nil else { throw DBusError.failed("an object is already exported at \(path)") }
            let object = ExportedObject(path: path, interfaces: interfaces, isManaged: managed, owner: owner(of: path), server: self)
            state.objects.objects[path] = object
            state.objects.served[path] = nil
            for manager in state.objects.managers(above: path) where managed {
                // What every reader sees alike is read once, not once per recipient.
                let alike = interfaces.map { try? object.propertiesAlike(of: $0, announcing: true) }
                try? emit(path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesAdded", owner: object.owner,
                          concerning: StandardInterfaces.objectManager, variesByReader: object.variesByReader) { reader in
                    var added: [(key: DBusValue, value: DBusValue)] = []
                    for (interface, alike) in zip(interfaces, alike) {
                        let values = alike.flatMap { try? object.allProperties(of: interface, for: reader, alike: $0, announcing: true) }
                        added.append((key: .string(interface.name), value: values ?? .vardict([:])))
                    }
                    return [.objectPath(path), .dictionary(key: "s", value: "a{sv}", added)]
                }
            }
            return object
        }
    }

    /// Stops serving the object at `path`, announcing `InterfacesRemoved`.
    public func unexport(_ path: ObjectPath) {
        connection.onQueue {
            guard let object = self.state.objects.objects.removeValue(forKey: path) else { return }
            self.state.objects.served[path] = nil
            for manager in self.state.objects.managers(above: path) where object.isManaged {
                try? self.emit(path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesRemoved",
                               owner: object.owner, concerning: StandardInterfaces.objectManager) { _ in
                    [.objectPath(path), object.interfaces.map(\.name).dbusValue]
                }
            }
        }
    }

    /// Makes the object at `path` an `org.freedesktop.DBus.ObjectManager` for everything below it.
    public func addObjectManager(at path: ObjectPath) {
        connection.onQueueSync { _ = state.objects.managers.insert(path) }
    }

    public func exportedObject(at path: ObjectPath) -> ExportedObject? {
        connection.onQueueSync { state.objects.objects[path] }
    }
}
