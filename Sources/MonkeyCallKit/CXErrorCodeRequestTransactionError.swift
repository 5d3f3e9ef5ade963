import DBus
import MonkeyCallAPI

/// Why the service refused a transaction (CallKit's
/// `CXErrorCodeRequestTransactionError`). Match it as in CallKit:
/// `catch CXErrorCodeRequestTransactionError.unknownCallUUID`.
public struct CXErrorCodeRequestTransactionError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Int, Sendable, CaseIterable {
        case unknown = 0
        case unentitled = 1
        case unknownCallProvider = 2
        case emptyTransaction = 3
        case unknownCallUUID = 4
        case callUUIDAlreadyExists = 5
        case invalidAction = 6
        case maximumCallGroupsReached = 7
    }

    public let code: Code
    /// The service's explanation.
    public let message: String

    public init(_ code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    public static var unknown: Code { .unknown }
    public static var unentitled: Code { .unentitled }
    public static var unknownCallProvider: Code { .unknownCallProvider }
    public static var emptyTransaction: Code { .emptyTransaction }
    public static var unknownCallUUID: Code { .unknownCallUUID }
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var invalidAction: Code { .invalidAction }
    public static var maximumCallGroupsReached: Code { .maximumCallGroupsReached }

    public var description: String { "CXErrorCodeRequestTransactionError.\(code): \(message)" }

    /// The error for a D-Bus error name of the API, or nil when it is not one of these.
    init?(_ error: DBusError) {
        guard let code = Code(apiError: error), code != .unknown else { return nil }
        self.init(code, message: error.message)
    }
}

extension CXErrorCodeRequestTransactionError.Code {
    /// Lets `catch CXErrorCodeRequestTransactionError.emptyTransaction` match.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CXErrorCodeRequestTransactionError)?.code == code
    }
}
