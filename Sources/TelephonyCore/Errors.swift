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
            "There is no call \(uuid.lowercased)."
        case .callUUIDAlreadyExists(let uuid):
            "A call with UUID \(uuid.lowercased) already exists."
        case .unknownAction(let uuid):
            "There is no pending action \(uuid.lowercased); it is unknown, already complete or timed out."
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

extension UUID {
    /// The UUID in the API's form: 8-4-4-4-12, lower case. Written from the bytes: Foundation's
    /// `uuidString` goes through `snprintf`, and every call's path and every signal about it names
    /// its UUID (some 300,000 instructions a call's life, 3.7 % of the daemon's, issue 55).
    public var lowercased: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                digits.withUTF8Buffer { hex in
                    var at = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            text[at] = UInt8(ascii: "-")
                            at += 1
                        }
                        text[at] = hex[Int(byte >> 4)]
                        text[at + 1] = hex[Int(byte & 0x0f)]
                        at += 2
                    }
                }
                return 36
            }
        }
    }

    /// Reads 8-4-4-4-12 hexadecimal digits in either letter case, as `UUID(uuidString:)` does,
    /// without its `sscanf`: some 8,000 instructions a UUID, and every report, action and answer
    /// names one or two (1 % of the daemon's instructions in a call's life, issue 55).
    public init?(apiString text: String) {
        var text = text
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = text.withUTF8 { utf8 in
            guard utf8.count == 36 else { return false }
            return withUnsafeMutableBytes(of: &value) { bytes in
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[at] == UInt8(ascii: "-") else { return false }
                        at += 1
                    }
                    guard let high = ScreenText.hexValue(utf8[at]), let low = ScreenText.hexValue(utf8[at + 1]) else { return false }
                    bytes[index] = high << 4 | low
                    at += 2
                }
                return true
            }
        }
        guard parsed else { return nil }
        self.init(uuid: value)
    }
}
