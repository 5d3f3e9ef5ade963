import DBus
import MonkeyCallAPI

/// The code enum of one of CallKit's refusal errors (`CXErrorCodeIncomingCallError.Code`,
/// `CXErrorCodeRequestTransactionError.Code`), each from the API errors it stands for.
public protocol CXErrorCodeKind: RawRepresentable<Int>, Sendable, Equatable, CaseIterable {
    /// CallKit's name of the error, as the description shows it.
    static var errorName: String { get }
}

/// A refusal of the service with a CallKit code and the service's explanation:
/// `CXErrorCodeIncomingCallError` and `CXErrorCodeRequestTransactionError` are
/// this error with their own code enum.
public struct CXErrorCodeError<Kind: CXErrorCodeKind>: Error, Sendable, Equatable, CustomStringConvertible {
    /// As in CallKit: `CXErrorCodeIncomingCallError.Code`.
    public typealias Code = Kind

    public let code: Code
    /// The service's explanation.
    public let message: String

    public init(_ code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    public var description: String { "\(Code.errorName).\(code): \(message)" }
}

extension CXErrorCodeKind {
    /// The code of an API error: the one of its name (`APIError.unentitled` is `.unentitled`), or
    /// nil when it is not one of this enum's.
    init?(_ error: APIError) {
        guard let code = Self.allCases.first(where: { "\($0)" == "\(error)" }) else { return nil }
        self = code
    }
}

extension CXErrorCodeError {
    /// The error for a D-Bus error name of the API, or nil when it is not one of these.
    init?(_ error: DBusError) {
        guard let apiError = APIError(error), let code = Code(apiError) else { return nil }
        self.init(code, message: error.message)
    }
}

extension CXErrorCodeKind {
    /// Lets `catch CXErrorCodeIncomingCallError.filteredByBlockList` match.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CXErrorCodeError<Self>)?.code == code
    }
}
