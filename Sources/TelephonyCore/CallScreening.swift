import FoundationEssentials

/// What the service decides about callers, injected so that the core stays free of D-Bus and of
/// the user's files (favorites, contacts, the block list, call directories, Do Not Disturb).
/// Called on the switchboard's executor, from inside the operation it serves.
public protocol CallScreening: AnyObject {
    /// A new incoming call from `handle`: the caller's name as the user sees it (worked out here
    /// once for the whole report) and whether the call rings. Every attempt counts, refused or not
    /// (the repeated-call exception of Do Not Disturb).
    func screen(_ handle: Handle, supplied name: String, now: UInt64) -> ScreenedCaller
    /// The caller's name as the user sees it, for a call made or given another handle or name.
    func displayName(of handle: Handle, supplied name: String) -> String
}

/// A caller as screening found it: their name and whether their call rings.
public struct ScreenedCaller: Sendable, Equatable {
    public var displayName: String
    public var verdict: ScreeningVerdict

    public init(displayName: String, verdict: ScreeningVerdict) {
        self.displayName = displayName
        self.verdict = verdict
    }
}

/// Whether an incoming call rings.
public enum ScreeningVerdict: Sendable, Equatable {
    case ring
    /// The block list or a directory blocks the caller.
    case blocked
    /// Do Not Disturb holds the call back.
    case filtered
    /// An unknown caller, silenced: refused like Do Not Disturb, recorded as missed.
    case silenced

    /// The error the provider gets for a refused call, and how Recents records it; nil: it rings.
    var refusal: (error: TelephonyError, status: RecentStatus)? {
        switch self {
        case .ring: nil
        case .blocked: (.filteredByBlockList, .blocked)
        case .filtered: (.filteredByDoNotDisturb, .filtered)
        case .silenced: (.filteredByDoNotDisturb, .missed)
        }
    }
}

/// An incoming call that screening refused before it rang: it still goes in Recents.
public struct RefusedCall: Sendable {
    public let uuid: UUID
    public let provider: Provider
    public let handle: Handle
    public let displayName: String
    public let status: RecentStatus
    /// Microseconds since the Unix epoch.
    public let at: UInt64
}
