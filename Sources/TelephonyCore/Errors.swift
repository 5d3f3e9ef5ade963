import FoundationEssentials
import ScreenText

/// Every error the telephony core reports. The cases are CallKit's errors,
/// named after the API's error names (see `name`).
public enum TelephonyError: Error, Hashable, Sendable {
    case emptyTransaction
    case unknownCallUUID(UUID)
    case callUUIDAlreadyExists(UUID)
    case invalidAction(String)
    case maximumCallGroupsReached(String)
    case unknownCallProvider(String)
    case unentitled(String)
    case filteredByDoNotDisturb
    case filteredByBlockList
    case unknownAction(UUID)
    case actionFailed(String)
    case actionTimedOut(String)
    case invalidArguments(String)
    case limitsExceeded(String)

    /// The API error's short name. The service maps `InvalidArgs` and
    /// `LimitsExceeded` to `org.freedesktop.DBus.Error.*`, the rest to
    /// `org.monkeycall.Telephony1.Error.<name>`.
    public var name: String {
        switch self {
        case .emptyTransaction: "EmptyTransaction"
        case .unknownCallUUID: "UnknownCallUUID"
        case .callUUIDAlreadyExists: "CallUUIDAlreadyExists"
        case .invalidAction: "InvalidAction"
        case .maximumCallGroupsReached: "MaximumCallGroupsReached"
        case .unknownCallProvider: "UnknownCallProvider"
        case .unentitled: "Unentitled"
        case .filteredByDoNotDisturb: "FilteredByDoNotDisturb"
        case .filteredByBlockList: "FilteredByBlockList"
        case .unknownAction: "UnknownAction"
        case .actionFailed: "ActionFailed"
        case .actionTimedOut: "ActionTimedOut"
        case .invalidArguments: "InvalidArgs"
        case .limitsExceeded: "LimitsExceeded"
        }
    }

    /// A sentence a user can read that names what is wrong.
    public var message: String {
        switch self {
        case .emptyTransaction:
            "The transaction has no actions."
        case .unknownCallUUID(let uuid):
            "There is no call \(uuid.apiString)."
        case .callUUIDAlreadyExists(let uuid):
            "A call with UUID \(uuid.apiString) already exists."
        case .unknownAction(let uuid):
            "There is no pending action \(uuid.apiString); it is unknown, already complete or timed out."
        case .filteredByDoNotDisturb:
            "The call was silenced by Do Not Disturb."
        case .filteredByBlockList:
            "The caller is on the block list."
        case .invalidAction(let text), .maximumCallGroupsReached(let text),
             .unknownCallProvider(let text), .unentitled(let text),
             .actionFailed(let text), .actionTimedOut(let text),
             .invalidArguments(let text), .limitsExceeded(let text):
            text
        }
    }
}
