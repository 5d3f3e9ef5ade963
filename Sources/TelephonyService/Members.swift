import DBus
import MonkeyCallAPI

/// Interface members built from the API's specs, whose handlers reach the service
/// weakly: a call that arrives while the service is being torn down gets `stopping`.
/// Every handler runs on the connection's queue (checked where calls are dispatched).
extension TelephonyService {
    func method<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>,
        _ handler: @escaping (TelephonyService, MethodCall, repeat each I) throws -> (repeat each O)
    ) -> Method {
        Method(spec, owner: self, gone: Self.stopping, handler)
    }

    /// For a handler that replies later, through `Reply`.
    func methodReplyingLater<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>,
        _ handler: @escaping (TelephonyService, Reply<repeat each O>, repeat each I) throws -> Void
    ) -> Method {
        Method.replyingLater(spec, owner: self, gone: Self.stopping, handler)
    }

    func property<T: DBusRepresentable>(
        _ spec: PropertySpec<T>, get: @escaping (TelephonyService) throws -> T, set: ((TelephonyService, T, MethodCall) throws -> Void)? = nil
    ) -> Property {
        Property(spec, owner: self, gone: Self.stopping, get: get, set: set)
    }

    /// Emits `PropertiesChanged` on the root object.
    func rootChanged(_ properties: [any PropertyName]) {
        connection.exportedObject(at: Telephony1.rootPath)?.propertiesChanged(properties)
    }
}
