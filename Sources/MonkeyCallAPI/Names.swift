import DBus

/// The MonkeyCall D-Bus API: its bus name, objects and paths. Its interfaces,
/// members and errors are declared in `Telephony1.swift`.
public enum Telephony1 {
    public static let busName = "org.monkeycall.Telephony1"
    public static let rootPath: ObjectPath = "/org/monkeycall/Telephony1"
    public static let version = "1.0"

    /// Where the provider objects are: `/Provider/<n>`.
    public static let providerRoot = rootPath.appending(ObjectPath.Component.provider)
    /// GNOME Shell's search provider (`Desktop.SearchProvider2`).
    public static let searchPath = rootPath.appending(ObjectPath.Component.search)
    /// KRunner's runner (`Desktop.KRunner1`).
    public static let runnerPath = rootPath.appending(ObjectPath.Component.runner)

    /// Where the call objects are: `/Call/<hex>`.
    public static let callRoot = rootPath.appending(ObjectPath.Component.call)

    public static func providerPath(_ id: UInt64) -> ObjectPath {
        providerRoot.appending(String(id))
    }

    /// `/Call/<uuid as 32 lower-case hex digits>`.
    public static func callPath(_ uuid: String) -> ObjectPath {
        // Not `replacingOccurrences`: that goes through NSString, 2% of the daemon's time in a lifecycle.
        callRoot.appending(String(decoding: uuid.lowercased().utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self))
    }

    /// The call's UUID (8-4-4-4-12, lower case) in a call path, or nil when it is not one.
    public static func callUUID(from path: ObjectPath) -> String? {
        let prefix = callRoot.rawValue + "/"
        guard path.rawValue.hasPrefix(prefix) else { return nil }
        let digits = Array(path.rawValue.utf8.dropFirst(prefix.utf8.count))
        guard digits.count == 32 else { return nil }
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, digit) in digits.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The provider number in a provider path, or nil when it is not one.
    public static func providerID(from path: ObjectPath) -> UInt64? {
        let prefix = providerRoot.rawValue + "/"
        guard path.rawValue.hasPrefix(prefix) else { return nil }
        return UInt64(path.rawValue.dropFirst(prefix.count))
    }

    /// The update object of a provider's open call directory update.
    public static func directoryUpdatePath(_ provider: ObjectPath) -> ObjectPath {
        provider.appending(ObjectPath.Component.directoryUpdate)
    }
}

extension Telephony1 {
    /// The contract as introspection XML: `dbus/org.monkeycall.Telephony1.xml`.
    public static var introspectionXML: String {
        IntrospectionXML.document(header: overview, interfaces: interfaces)
    }
}

extension Connection {
    /// `Manager.Subscribe`: from now on this connection hears the service's signals about the
    /// objects it may see. Call it again after the service restarts.
    public func subscribeToTelephony() async throws {
        try await call(Telephony1.Manager.subscribe, destination: Telephony1.busName, path: Telephony1.rootPath)
    }
}
