import DBus
import MonkeyCallAPI

/// One of the service's exported objects or interfaces: its members are built from the API's
/// specs with the helpers below, whose handlers reach the object weakly. A call that arrives
/// while the service is being torn down gets `stopping`. Every handler runs on the connection's
/// queue (checked where calls are dispatched).
@TelephonyActor
protocol ServiceObject: AnyObject {}

/// Handlers hold their object weakly: a call that arrives while it is being torn down gets this.
let stopping = DBusError(name: DBusError.Name.serviceUnknown, message: "monkeycalld is stopping")

extension ServiceObject {
    func method<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>,
        _ handler: @escaping (Self, MethodCall, repeat each I) throws -> (repeat each O)
    ) -> Method {
        Method(spec, owner: self, gone: stopping, handler)
    }

    /// For a handler that replies later, through `Reply`.
    func methodReplyingLater<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>,
        _ handler: @escaping (Self, Reply<repeat each O>, repeat each I) throws -> Void
    ) -> Method {
        Method.replyingLater(spec, owner: self, gone: stopping, handler)
    }

    func property<T: DBusRepresentable>(
        _ spec: PropertySpec<T>, get: @escaping (Self) throws -> T, set: ((Self, T, MethodCall) throws -> Void)? = nil
    ) -> Property {
        Property(spec, owner: self, gone: stopping, get: get, set: set)
    }

    /// A property whose type is known only as a signature (a call's, read as last published).
    func property(_ name: String, _ signature: Signature, get: @escaping (Self) throws -> DBusValue) -> Property {
        Property(name, signature, get: { [weak self] in
            guard let self else { throw stopping }
            return try get(self)
        })
    }

    /// A property of an interface made once for many objects: `get` receives the path of the
    /// object read, and the reader.
    func property(_ name: String, _ signature: Signature, variesByReader: Bool,
                  ofObject get: @escaping (Self, ObjectPath, _ reader: Caller?) throws -> DBusValue) -> Property {
        Property(name, signature, variesByReader: variesByReader, ofObject: { [weak self] path, reader in
            guard let self else { throw stopping }
            return try get(self, path, reader)
        })
    }

    /// The same for a property whose value depends on who reads it: `get` receives the reader.
    func property(_ name: String, _ signature: Signature, get: @escaping (Self, _ reader: Caller?) throws -> DBusValue) -> Property {
        Property(name, signature, perReader: { [weak self] reader in
            guard let self else { throw stopping }
            return try get(self, reader)
        })
    }
}
