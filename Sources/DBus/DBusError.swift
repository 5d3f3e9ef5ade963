/// An error that travels as a D-Bus error reply: a name such as
/// `org.freedesktop.DBus.Error.InvalidArgs` and a message a person can read.
public struct DBusError: Error, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }
}

/// An error type of the application that knows its D-Bus error name.
/// Handlers throw these; the object server turns them into error replies.
public protocol DBusErrorConvertible: Error {
    var dbusError: DBusError { get }
}

extension DBusError: DBusErrorConvertible {
    public var dbusError: DBusError { self }
}

extension DBusError {
    /// The standard error names of the freedesktop specification.
    public enum Name {
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let timeout = "org.freedesktop.DBus.Error.Timeout"
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    }

    public static func failed(_ message: String) -> DBusError { DBusError(name: Name.failed, message: message) }
    public static func invalidArgs(_ message: String) -> DBusError { DBusError(name: Name.invalidArgs, message: message) }
    public static func accessDenied(_ message: String) -> DBusError { DBusError(name: Name.accessDenied, message: message) }
    public static func limitsExceeded(_ message: String) -> DBusError { DBusError(name: Name.limitsExceeded, message: message) }
    public static func unknownMethod(_ message: String) -> DBusError { DBusError(name: Name.unknownMethod, message: message) }
    public static func unknownObject(_ message: String) -> DBusError { DBusError(name: Name.unknownObject, message: message) }
    public static func unknownInterface(_ message: String) -> DBusError { DBusError(name: Name.unknownInterface, message: message) }
    public static func unknownProperty(_ message: String) -> DBusError { DBusError(name: Name.unknownProperty, message: message) }
    public static func propertyReadOnly(_ message: String) -> DBusError { DBusError(name: Name.propertyReadOnly, message: message) }
    public static func disconnected(_ message: String) -> DBusError { DBusError(name: Name.disconnected, message: message) }

    /// Any error as a D-Bus error: its own name when it has one, else `Failed`.
    public init(_ error: any Error) {
        if let convertible = error as? DBusErrorConvertible {
            self = convertible.dbusError
        } else {
            self = .failed(String(describing: error))
        }
    }
}
