import MonkeyCallAPI

/// The enums of CallKit whose values the API names in words: each case is one of the shared
/// vocabulary's (`TelephonyVocabulary`), whose raw value is its name on the wire. Written out
/// case by case, never derived from the Swift names: renaming a case changes nothing on the bus.
protocol APINamed: CaseIterable, Equatable {
    associatedtype Word: RawRepresentable where Word.RawValue == String
    var word: Word { get }
}

extension APINamed {
    /// The API's name, e.g. `remote-ended`.
    var apiName: String { word.rawValue }

    /// The case the API names so, or nil for a name it does not have.
    init?(apiName: String) {
        guard let value = Self.allCases.first(where: { $0.apiName == apiName }) else { return nil }
        self = value
    }
}

extension CXCallEndedReason: APINamed {
    var word: EndReason {
        switch self {
        case .failed: .failed
        case .remoteEnded: .remoteEnded
        case .unanswered: .unanswered
        case .answeredElsewhere: .answeredElsewhere
        case .declinedElsewhere: .declinedElsewhere
        }
    }
}

extension CXHandle.HandleType: APINamed {
    var word: TelephonyVocabulary.HandleType {
        switch self {
        case .generic: .generic
        case .phoneNumber: .phoneNumber
        case .emailAddress: .emailAddress
        }
    }
}

extension CXPlayDTMFCallAction.ActionType: APINamed {
    var word: DTMFType {
        switch self {
        case .singleTone: .singleTone
        case .softPause: .softPause
        case .hardPause: .hardPause
        }
    }
}
