import DBus

/// The names of the MonkeyCall D-Bus API (`dbus/org.monkeycall.Telephony1.xml`).
public enum Telephony1 {
    public static let busName = "org.monkeycall.Telephony1"
    public static let rootPath: ObjectPath = "/org/monkeycall/Telephony1"
    public static let version = "1.0"

    public enum Interface {
        public static let manager = "org.monkeycall.Telephony1.Manager"
        public static let callController = "org.monkeycall.Telephony1.CallController"
        public static let provider = "org.monkeycall.Telephony1.Provider"
        public static let call = "org.monkeycall.Telephony1.Call"
        public static let callDirectory = "org.monkeycall.Telephony1.CallDirectory"
        public static let callDirectoryUpdate = "org.monkeycall.Telephony1.CallDirectoryUpdate"
        public static let recents = "org.monkeycall.Telephony1.Recents"
        public static let favorites = "org.monkeycall.Telephony1.Favorites"
    }

    public static let errorPrefix = "org.monkeycall.Telephony1.Error."

    public static func providerPath(_ id: UInt64) -> ObjectPath {
        rootPath.appending("Provider").appending(String(id))
    }

    /// `/Call/<uuid as 32 lower-case hex digits>`.
    public static func callPath(_ uuid: String) -> ObjectPath {
        rootPath.appending("Call").appending(uuid.lowercased().replacingOccurrences(of: "-", with: ""))
    }

    /// The provider number in a provider path, or nil when it is not one.
    public static func providerID(from path: ObjectPath) -> UInt64? {
        let prefix = rootPath.rawValue + "/Provider/"
        guard path.rawValue.hasPrefix(prefix) else { return nil }
        return UInt64(path.rawValue.dropFirst(prefix.count))
    }
}
