import DBus
import MonkeyCallAPI

/// The code enums of CallKit's errors name their cases like the API's errors
/// (`callUUIDAlreadyExists` ~ `org.monkeycall.Telephony1.Error.CallUUIDAlreadyExists`):
/// the mapping follows from the names, written once.
protocol APIErrorCode: CaseIterable {}

extension APIErrorCode {
    /// The case whose name is the API error's name with its first letter lowered.
    init?(apiError error: DBusError) {
        guard error.name.hasPrefix(Telephony1.errorPrefix) else { return nil }
        let name = error.name.dropFirst(Telephony1.errorPrefix.count)
        guard let match = Self.allCases.first(where: { code in
            let caseName = String(describing: code)
            return caseName.prefix(1).uppercased() + caseName.dropFirst() == name
        }) else { return nil }
        self = match
    }
}
