import CallDirectory
import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core errors travel under the API's error names.
extension TelephonyError: DBusErrorConvertible {
    public var dbusError: DBusError {
        switch self {
        case .invalidArguments(let message): DBusError.invalidArgs(message)
        case .limitsExceeded(let message): DBusError.limitsExceeded(message)
        case .emptyTransaction: APIError.emptyTransaction(message)
        case .unknownCallUUID: APIError.unknownCallUUID(message)
        case .callUUIDAlreadyExists: APIError.callUUIDAlreadyExists(message)
        case .invalidAction: APIError.invalidAction(message)
        case .maximumCallGroupsReached: APIError.maximumCallGroupsReached(message)
        case .unknownCallProvider: APIError.unknownCallProvider(message)
        case .unentitled: APIError.unentitled(message)
        case .filteredByDoNotDisturb: APIError.filteredByDoNotDisturb(message)
        case .filteredByBlockList: APIError.filteredByBlockList(message)
        case .unknownAction: APIError.unknownAction(message)
        case .actionFailed: APIError.actionFailed(message)
        case .actionTimedOut: APIError.actionTimedOut(message)
        }
    }
}

/// Call directory errors under the API's names.
extension DirectoryError: DBusErrorConvertible {
    public var dbusError: DBusError {
        switch self {
        case .entriesOutOfOrder: APIError.entriesOutOfOrder(message)
        case .duplicateEntries: APIError.duplicateEntries(message)
        case .maximumEntriesExceeded: APIError.maximumEntriesExceeded(message)
        case .unexpectedIncrementalRemoval: APIError.unexpectedIncrementalRemoval(message)
        case .currentlyLoading: APIError.currentlyLoading(message)
        case .corruptDirectory: APIError.corruptDirectory(message)
        case .invalidArguments: DBusError.invalidArgs(message)
        case .storageFailed: DBusError.failed(message)
        }
    }
}
