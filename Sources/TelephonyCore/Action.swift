import FoundationEssentials

/// What an action does.
public enum ActionKind: Hashable, Sendable {
    case start(handle: Handle, video: Bool, contactIdentifier: String)
    case answer
    case end
    case setHeld(Bool)
    case setMuted(Bool)
    /// Join the group of the given call, or leave the group (nil).
    case setGroup(UUID?)
    case playDTMF(digits: String, type: DTMFType)

    /// The kind's name.
    public var kindName: ActionName {
        switch self {
        case .start: .start
        case .answer: .answer
        case .end: .end
        case .setHeld: .setHeld
        case .setMuted: .setMuted
        case .setGroup: .setGroup
        case .playDTMF: .playDTMF
        }
    }

    /// The API's name of the kind.
    public var name: String { kindName.rawValue }

    /// The kinds that bring a call to life and so call for arbitration.
    var bringsCallUp: Bool {
        switch self {
        case .start, .answer: true
        default: false
        }
    }
}

/// What a controller asks for: one action of a transaction.
public struct ActionRequest: Hashable, Sendable {
    public var callUUID: UUID
    public var kind: ActionKind
    /// For `start` only: the provider to place the call with; nil = route it.
    public var provider: ProviderID?

    public static func start(_ uuid: UUID, handle: Handle, video: Bool = false, contactIdentifier: String = "", provider: ProviderID? = nil) -> ActionRequest {
        ActionRequest(callUUID: uuid, kind: .start(handle: handle, video: video, contactIdentifier: contactIdentifier), provider: provider)
    }
    public static func answer(_ uuid: UUID) -> ActionRequest { ActionRequest(callUUID: uuid, kind: .answer) }
    public static func end(_ uuid: UUID) -> ActionRequest { ActionRequest(callUUID: uuid, kind: .end) }
    public static func setHeld(_ uuid: UUID, _ onHold: Bool) -> ActionRequest { ActionRequest(callUUID: uuid, kind: .setHeld(onHold)) }
    public static func setMuted(_ uuid: UUID, _ muted: Bool) -> ActionRequest { ActionRequest(callUUID: uuid, kind: .setMuted(muted)) }
    public static func setGroup(_ uuid: UUID, with other: UUID?) -> ActionRequest { ActionRequest(callUUID: uuid, kind: .setGroup(other)) }
    public static func playDTMF(_ uuid: UUID, digits: String, type: DTMFType = .singleTone) -> ActionRequest {
        ActionRequest(callUUID: uuid, kind: .playDTMF(digits: digits, type: type))
    }
}

/// An accepted action, dispatched to the provider that owns its call.
public struct Action: Hashable, Sendable, Identifiable {
    public let id: UUID
    public let transactionID: UUID
    public let callUUID: UUID
    public let provider: ProviderID
    public let kind: ActionKind
    /// Microseconds since the Unix epoch after which the action times out.
    public let deadline: UInt64
    /// True for the actions the system added (arbitration, ring timeout, resuming).
    public let addedBySystem: Bool
}

public enum TransactionState: Hashable, Sendable {
    case pending
    case succeeded
    case failed(TelephonyError)
}

/// A group of actions requested together; it completes exactly once.
public struct Transaction: Hashable, Sendable, Identifiable {
    public let id: UUID
    /// The bus name of the requester; nil when the system requested it (e.g. the ring timeout).
    public let requester: String?
    /// In dispatch order, including the actions the system added.
    public let actions: [Action]
    public internal(set) var state: TransactionState

    public var isComplete: Bool { state != .pending }
}
