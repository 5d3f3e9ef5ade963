/// The enums of CallKit whose values the API names in words: the API's name of a
/// case is the case's own name in lower case with hyphens (`remoteEnded` →
/// `remote-ended`, `phoneNumber` → `phone-number`), as Telephony1's documentation
/// lists them. ValueTests pins each enum's names.
protocol APINamed: CaseIterable {}

extension APINamed {
    /// The API's name, e.g. `remote-ended`.
    var apiName: String {
        String(describing: self).reduce(into: "") { name, character in
            if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
        }
    }

    /// The case the API names so, or nil for a name it does not have.
    init?(apiName: String) {
        guard let value = Self.allCases.first(where: { $0.apiName == apiName }) else { return nil }
        self = value
    }
}
