import TelephonyVocabulary

/// The keys of the API's option dictionaries with their types, by the argument that takes
/// them (the method specs name the arguments; the documentation gives the keys).
public enum OptionKeys {
    public static let configuration: [String: String] = [
        "Name": "s", "MaximumCallGroups": "u", "MaximumCallsPerCallGroup": "u", "SupportsVideo": "b", "SupportedHandleTypes": "as",
        "IncludesCallsInRecents": "b", "RingtoneSound": "s", "IconName": "s", "IconData": "ay", "URLSchemes": "as", "DesktopEntry": "s",
    ]
    public static let update: [String: String] = [
        "Handle": "s", "HandleType": "s", "LocalizedCallerName": "s", "SupportsHolding": "b", "SupportsGrouping": "b",
        "SupportsUngrouping": "b", "SupportsDTMF": "b", "HasVideo": "b",
    ]
    public static let actionInfo: [String: String] = ["Date": "t"]
    public static let startOptions: [String: String] = ["HandleType": "s", "Video": "b", "Provider": "o", "CallUUID": "s"]
    public static let actions: [String: [String: String]] = [
        ActionName.start.rawValue: ["CallUUID": "s", "Handle": "s", "HandleType": "s", "Video": "b", "ContactIdentifier": "s", "Provider": "o"],
        ActionName.answer.rawValue: ["CallUUID": "s"], ActionName.end.rawValue: ["CallUUID": "s"],
        ActionName.setHeld.rawValue: ["CallUUID": "s", "OnHold": "b"], ActionName.setMuted.rawValue: ["CallUUID": "s", "Muted": "b"],
        ActionName.setGroup.rawValue: ["CallUUID": "s", "GroupWith": "s"], ActionName.playDTMF.rawValue: ["CallUUID": "s", "Digits": "s", "Type": "s"],
    ]

    /// Which keys an `a{sv}` argument takes, by the argument's name in the spec.
    public static func keys(forArgument name: String) -> [String: String] {
        switch name {
        case "configuration": configuration
        case "update": update
        case "info": actionInfo
        case "options": startOptions
        default: [:]
        }
    }

    public static let typeOfAnyKey: [String: String] = {
        var all: [String: String] = [:]
        for table in [configuration, update, actionInfo, startOptions] + Array(actions.values) { all.merge(table) { first, _ in first } }
        return all
    }()
    /// Every key of every option dictionary.
    public static let allNames: [String] = typeOfAnyKey.keys.sorted()
}
