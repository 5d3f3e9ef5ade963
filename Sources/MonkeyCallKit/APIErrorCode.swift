import DBus
import MonkeyCallAPI

/// The code enums of CallKit's errors, each from the API errors it stands for.
protocol APIErrorCode {
    init?(_ error: APIError)
}

extension APIErrorCode {
    /// The code of a D-Bus error of the API, or nil when it is not one of this enum's.
    init?(apiError error: DBusError) {
        guard let apiError = APIError(error) else { return nil }
        self.init(apiError)
    }
}

extension CXErrorCodeRequestTransactionError.Code: APIErrorCode {
    init?(_ error: APIError) {
        switch error {
        case .unentitled: self = .unentitled
        case .unknownCallProvider: self = .unknownCallProvider
        case .emptyTransaction: self = .emptyTransaction
        case .unknownCallUUID: self = .unknownCallUUID
        case .callUUIDAlreadyExists: self = .callUUIDAlreadyExists
        case .invalidAction: self = .invalidAction
        case .maximumCallGroupsReached: self = .maximumCallGroupsReached
        default: return nil
        }
    }
}

extension CXErrorCodeIncomingCallError.Code: APIErrorCode {
    init?(_ error: APIError) {
        switch error {
        case .unentitled: self = .unentitled
        case .callUUIDAlreadyExists: self = .callUUIDAlreadyExists
        case .filteredByDoNotDisturb: self = .filteredByDoNotDisturb
        case .filteredByBlockList: self = .filteredByBlockList
        default: return nil
        }
    }
}
