import DBus
import MonkeyCallAPI

/// Any other failure: the service is not running, the provider was
/// invalidated, or a D-Bus error that has no CallKit code. Carries the D-Bus
/// error name and message.
public struct CXError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// Nobody owns `org.monkeycall.Telephony1`: monkeycalld is not running.
        case serviceNotRunning
        /// The provider was invalidated; it does nothing more.
        case invalidated
        /// No session bus, or the connection to it was lost.
        case noBus
        /// Another error of the service or of D-Bus; see `name`.
        case other
    }

    public let code: Code
    /// The D-Bus error name.
    public let name: String
    public let message: String

    public var description: String { "\(name): \(message)" }

    static let serviceNotRunning = CXError(
        code: .serviceNotRunning, name: DBusError.Name.serviceUnknown,
        message: "monkeycalld is not running: nobody owns \(Telephony1.busName) on this bus, so the MonkeyCall service cannot be reached")

    static let invalidated = CXError(code: .invalidated, name: APIError.invalidated.rawValue,
                                     message: "the provider was invalidated")
}

extension CXError {
    /// The error of `error`, as it is: service not running and lost buses get their own codes.
    init(_ error: any Error) {
        if let error = error as? CXError {
            self = error
            return
        }
        let dbus = DBusError(error)
        switch dbus.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            self = .serviceNotRunning
        case DBusError.Name.disconnected, DBusError.Name.noReply:
            self.init(code: .noBus, name: dbus.name, message: dbus.message)
        default:
            self.init(code: .other, name: dbus.name, message: dbus.message)
        }
    }
}

enum ErrorMapping {
    /// Errors of `ReportNewIncomingCall`.
    static func incoming(_ error: any Error) -> any Error {
        if let dbus = error as? DBusError, let mapped = CXErrorCodeIncomingCallError(dbus) { return mapped }
        return CXError(error)
    }

    /// Errors of `RequestTransaction`.
    static func request(_ error: any Error) -> any Error {
        if let dbus = error as? DBusError, let mapped = CXErrorCodeRequestTransactionError(dbus) { return mapped }
        return CXError(error)
    }
}
