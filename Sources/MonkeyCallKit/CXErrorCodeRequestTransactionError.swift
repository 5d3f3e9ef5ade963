import MonkeyCallAPI

/// Why the service refused a transaction (CallKit's
/// `CXErrorCodeRequestTransactionError`). Match it as in CallKit:
/// `catch CXErrorCodeRequestTransactionError.unknownCallUUID`.
public typealias CXErrorCodeRequestTransactionError = CXErrorCodeError<CXRequestTransactionErrorCode>

/// `CXErrorCodeRequestTransactionError.Code`.
public enum CXRequestTransactionErrorCode: Int, CXErrorCodeKind {
    case unknown = 0
    case unentitled = 1
    case unknownCallProvider = 2
    case emptyTransaction = 3
    case unknownCallUUID = 4
    case callUUIDAlreadyExists = 5
    case invalidAction = 6
    case maximumCallGroupsReached = 7

    public static var errorName: String { "CXErrorCodeRequestTransactionError" }
}

/// The codes named on the error, as CallKit has them (`CXErrorCodeRequestTransactionError.unknownCallUUID`).
extension CXErrorCodeError where Code == CXRequestTransactionErrorCode {
    public static var unknown: Code { .unknown }
    public static var unentitled: Code { .unentitled }
    public static var unknownCallProvider: Code { .unknownCallProvider }
    public static var emptyTransaction: Code { .emptyTransaction }
    public static var unknownCallUUID: Code { .unknownCallUUID }
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var invalidAction: Code { .invalidAction }
    public static var maximumCallGroupsReached: Code { .maximumCallGroupsReached }
}
