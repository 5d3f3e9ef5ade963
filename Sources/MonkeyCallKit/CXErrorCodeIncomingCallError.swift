import DBus
import MonkeyCallAPI

/// Why the service refused a new incoming call (CallKit's
/// `CXErrorCodeIncomingCallError`). Match it as in CallKit:
/// `catch CXErrorCodeIncomingCallError.callUUIDAlreadyExists`.
public struct CXErrorCodeIncomingCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Int, Sendable, CaseIterable {
        case unknown = 0
        case unentitled = 1
        case callUUIDAlreadyExists = 2
        case filteredByDoNotDisturb = 3
        case filteredByBlockList = 4
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
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var filteredByDoNotDisturb: Code { .filteredByDoNotDisturb }
    public static var filteredByBlockList: Code { .filteredByBlockList }

    public var description: String { "CXErrorCodeIncomingCallError.\(code): \(message)" }

    /// The error for a D-Bus error name of the API, or nil when it is not one of these.
    init?(_ error: DBusError) {
        guard let code = Code(apiError: error), code != .unknown else { return nil }
        self.init(code, message: error.message)
    }
}

extension CXErrorCodeIncomingCallError.Code {
    /// Lets `catch CXErrorCodeIncomingCallError.filteredByBlockList` match.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CXErrorCodeIncomingCallError)?.code == code
    }
}
