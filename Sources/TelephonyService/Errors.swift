import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core errors travel under the API's error names.
extension TelephonyError: DBusErrorConvertible {
    public var dbusError: DBusError {
        switch self {
        case .invalidArguments(let message): DBusError.invalidArgs(message)
        case .limitsExceeded(let message): DBusError.limitsExceeded(message)
        default: DBusError(name: Telephony1.errorPrefix + name, message: message)
        }
    }
}
