import MonkeyCallAPI

/// Why the service refused a new incoming call (CallKit's
/// `CXErrorCodeIncomingCallError`). Match it as in CallKit:
/// `catch CXErrorCodeIncomingCallError.callUUIDAlreadyExists`.
public typealias CXErrorCodeIncomingCallError = CXErrorCodeError<CXIncomingCallErrorCode>

/// `CXErrorCodeIncomingCallError.Code`.
public enum CXIncomingCallErrorCode: Int, CXErrorCodeKind {
    case unknown = 0
    case unentitled = 1
    case callUUIDAlreadyExists = 2
    case filteredByDoNotDisturb = 3
    case filteredByBlockList = 4

    public static var errorName: String { "CXErrorCodeIncomingCallError" }
}

/// The codes named on the error, as CallKit has them (`CXErrorCodeIncomingCallError.unentitled`).
extension CXErrorCodeError where Code == CXIncomingCallErrorCode {
    public static var unknown: Code { .unknown }
    public static var unentitled: Code { .unentitled }
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var filteredByDoNotDisturb: Code { .filteredByDoNotDisturb }
    public static var filteredByBlockList: Code { .filteredByBlockList }
}
