import TelephonyVocabulary
/// An app that can place calls now, as routing sees it: one per app key, newest first.
public struct CallingApp: Sendable, Hashable {
    /// The app key (a sandboxed app's id, a host app's Name): what favorites and Recents keep.
    public var appKey: String
    /// How the user knows it.
    public var label: String
    /// The handle types it takes.
    public var handleTypes: Set<String>
    /// It declared `tel` among its URL schemes.
    public var takesTelLinks: Bool

    public init(appKey: String, label: String, handleTypes: Set<String>, takesTelLinks: Bool) {
        (self.appKey, self.label, self.handleTypes, self.takesTelLinks) = (appKey, label, handleTypes, takesTelLinks)
    }

    /// Whether it can call a handle of this type.
    public func calls(_ handleType: String) -> Bool {
        handleTypes.contains(handleType) || (handleType == HandleType.phoneNumber.rawValue && takesTelLinks)
    }
}

/// Which app calls a result (API.md, "System search"): the app of the favorite or of the Recents
/// entry, else for a number the user's `tel` choice, else the one app that can; else the user
/// chooses (the Phone app asks).
public enum CallRoute: Sendable, Equatable {
    case app(CallingApp)
    /// Several apps can: the user picks (newest first).
    case choose([CallingApp])
    /// No app that can call it is running.
    case none

    /// `preferred`: the result's own app ("" for none); `telChoice`: the app that opens `tel:`
    /// links, as the user chose it (or as the first app to declare the scheme claimed it).
    public init(handleType: String, preferred: String, apps: [CallingApp], telChoice: String?) {
        let able = apps.filter { $0.calls(handleType) }
        if !preferred.isEmpty, let app = able.first(where: { $0.appKey == preferred }) {
            self = .app(app)
        } else if handleType == HandleType.phoneNumber.rawValue, let telChoice, let app = able.first(where: { $0.appKey == telChoice }) {
            self = .app(app)
        } else if able.count == 1 {
            self = .app(able[0])
        } else if able.isEmpty {
            self = .none
        } else {
            self = .choose(able)
        }
    }

    /// The apps the user could pick from: the one that calls, or every one that can.
    public var apps: [CallingApp] {
        switch self {
        case .app(let app): [app]
        case .choose(let apps): apps
        case .none: []
        }
    }
}
