/// The words of telephony that every layer shares, each spelled once with its name on the wire
/// (`../../dbus/org.monkeycall.Telephony1.xml` documents them): the core, the service, the client
/// library, MonkeyCallKit, the CLI and the Phone app all use these types, never the strings.
/// Each raw value is spelled out, the wire name written once: renaming a case changes nothing on the bus.
/// With them, the two values a provider's report is made of, `Handle` and `CallUpdate`: the core
/// takes them, MonkeyCallAPI's specs declare them as arguments, MonkeyCallKit's `CXCallUpdate` holds one.

/// Where a call is in its life.
public enum CallState: String, CaseIterable, Hashable, Sendable, Codable {
    case ringing = "ringing", dialing = "dialing", connecting = "connecting", active = "active", held = "held", ended = "ended"
}

/// Why a call ended, as its provider reports it (CallKit's `CXCallEndedReason`).
public enum EndReason: String, CaseIterable, Hashable, Sendable, Codable {
    case failed = "failed"
    case remoteEnded = "remote-ended"
    case unanswered = "unanswered"
    case answeredElsewhere = "answered-elsewhere"
    case declinedElsewhere = "declined-elsewhere"
}

/// What a handle is (CallKit's `CXHandle.HandleType`).
public enum HandleType: String, CaseIterable, Hashable, Sendable, Codable {
    case generic = "generic"
    case phoneNumber = "phone-number"
    case emailAddress = "email-address"
}

/// How DTMF digits are played (CallKit's `CXPlayDTMFCallAction.ActionType`).
public enum DTMFType: String, CaseIterable, Hashable, Sendable, Codable {
    case singleTone = "single-tone"
    case softPause = "soft-pause"
    case hardPause = "hard-pause"
}

/// How a call in Recents went.
public enum RecentStatus: String, CaseIterable, Hashable, Sendable, Codable {
    case answered = "answered", missed = "missed", declined = "declined", blocked = "blocked", filtered = "filtered"
    case failed = "failed", cancelled = "cancelled"
}

/// The kinds of action a provider performs for the user (CallKit's `CXAction` subclasses).
public enum ActionName: String, CaseIterable, Hashable, Sendable, Codable {
    case start = "start", answer = "answer", end = "end"
    case setHeld = "set-held", setMuted = "set-muted", setGroup = "set-group", playDTMF = "play-dtmf"
}

extension RawRepresentable where RawValue == String {
    /// The wire name in double quotes, as the contract's documentation writes it.
    public var quoted: String { "\"\(rawValue)\"" }
}

/// Who is on the other end of a call.
public struct Handle: Hashable, Sendable {
    public var type: HandleType
    public var value: String
    public init(type: HandleType = .generic, value: String) {
        self.type = type
        self.value = value
    }
}

/// A provider's report about a call. Every field is optional: an absent field
/// leaves the call as it is.
public struct CallUpdate: Hashable, Sendable {
    public var handle: Handle?
    public var localizedCallerName: String?
    public var supportsHolding: Bool?
    public var supportsGrouping: Bool?
    public var supportsUngrouping: Bool?
    public var supportsDTMF: Bool?
    public var hasVideo: Bool?

    public init(
        handle: Handle? = nil,
        localizedCallerName: String? = nil,
        supportsHolding: Bool? = nil,
        supportsGrouping: Bool? = nil,
        supportsUngrouping: Bool? = nil,
        supportsDTMF: Bool? = nil,
        hasVideo: Bool? = nil
    ) {
        self.handle = handle
        self.localizedCallerName = localizedCallerName
        self.supportsHolding = supportsHolding
        self.supportsGrouping = supportsGrouping
        self.supportsUngrouping = supportsUngrouping
        self.supportsDTMF = supportsDTMF
        self.hasVideo = hasVideo
    }
}
