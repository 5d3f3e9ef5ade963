import FoundationEssentials
// The shared words (call states, end reasons, handle and DTMF types, action names) are the core's too.
@_exported import TelephonyVocabulary

/// A call as the system sees it.
public struct Call: Hashable, Sendable, Identifiable {
    public let uuid: UUID
    public let provider: ProviderID
    public let providerName: String
    /// The provider's `appAccount`: what the call counts against in per-app limits and shares.
    public internal(set) var appAccount: String = ""
    /// The provider's `appKey`: whose directory and routing the call belongs to.
    public internal(set) var appKey: String = ""
    /// The provider's `appLabel`: the app as the user knows it, for what the user sees.
    public internal(set) var appLabel: String = ""
    /// How the user sees the call's app: its label, else its provider's Name.
    public var appDisplayName: String { appLabel.isEmpty ? providerName : appLabel }
    public internal(set) var handle: Handle
    public internal(set) var callerName: String
    /// The caller's name as the user sees it (a favorite's, a contact's, else the app's, else a
    /// directory's label), worked out once by the injected `CallScreening` when the call is reported,
    /// made, or given another handle or name, and when the user's names change (`renameCallers`).
    public internal(set) var displayName: String = ""
    public let outgoing: Bool
    /// Changed only by `move(to:at:reason:)`, with the timestamps and flags that go with it.
    public private(set) var state: CallState
    public internal(set) var muted: Bool = false
    /// Its ringtone was silenced (`Switchboard.silence`): it rings on, without a sound.
    public internal(set) var silenced: Bool = false
    /// Whether the call was ever active (it stays true once held or ended).
    public private(set) var hasConnected: Bool = false
    public internal(set) var hasVideo: Bool
    /// The UUID of the call's group; nil when the call is alone.
    public internal(set) var group: UUID? = nil
    public internal(set) var supportsHolding: Bool = true
    public internal(set) var supportsGrouping: Bool = false
    public internal(set) var supportsUngrouping: Bool = false
    public internal(set) var supportsDTMF: Bool = true
    /// Microseconds since the Unix epoch; 0 = not yet.
    public let startedAt: UInt64
    public private(set) var connectingAt: UInt64 = 0
    public private(set) var connectedAt: UInt64 = 0
    public private(set) var endedAt: UInt64 = 0
    /// Why the call ended; nil while it lives, and nil when the user's own `end` action ended it.
    public private(set) var endReason: EndReason? = nil
    /// Whether an `answer` of this incoming call was fulfilled.
    public internal(set) var wasAnswered: Bool = false
    /// Whether the provider fulfilled the `start` of this outgoing call.
    public internal(set) var startFulfilled: Bool = false
    /// The call this one was put on hold for by the system (arbitration), while it is so held.
    /// Bookkeeping only: changing it alone emits no `callChanged`.
    public internal(set) var heldBySystemFor: UUID? = nil

    public var id: UUID { uuid }

    /// On hold: derived from `state`, never stored.
    public var onHold: Bool { state == .held }

    /// Over: derived from `state`, never stored.
    public var hasEnded: Bool { state == .ended }

    /// The one place a call's state changes, with the bookkeeping each move
    /// brings (`time` in microseconds since the Unix epoch):
    /// - to `.connecting`: `connectingAt`;
    /// - to `.active` from ringing, dialing or connecting: `hasConnected` and
    ///   `connectedAt`, and `connectingAt` too if an outgoing call never had one;
    /// - to `.active` from held, or to `.held`: nothing more;
    /// - to `.ended`: `endedAt` and `endReason` (nil: the user's own `end`).
    ///
    /// Moving to the state the call is in changes nothing (a hold of a held
    /// call, a resume of an active one). The callers check that a move is
    /// allowed and say why not; a move the model does not have is a bug.
    mutating func move(to newState: CallState, at time: UInt64, reason: EndReason? = nil) {
        let old = state
        guard newState != old else { return }
        assert(Self.allowedMoves[old, default: []].contains(newState), "A call cannot move from \(old) to \(newState).")
        state = newState
        switch newState {
        case .ringing, .dialing, .held:
            break
        case .connecting:
            connectingAt = time
        case .active:
            guard old != .held else { break }
            hasConnected = true
            connectedAt = time
            if old != .ringing && connectingAt == 0 { connectingAt = time }
        case .ended:
            endedAt = time
            endReason = reason
        }
    }

    /// The moves of the model; a call starts ringing (incoming) or dialing (outgoing).
    static let allowedMoves: [CallState: Set<CallState>] = [
        .ringing: [.active, .ended],
        .dialing: [.connecting, .active, .ended],
        .connecting: [.active, .ended],
        .active: [.held, .ended],
        .held: [.active, .ended],
        .ended: [],
    ]

    /// Active or held: the call is connected and not over.
    var isConnectedLive: Bool { state == .active || state == .held }

    /// Counts toward the provider's call groups: live and not ringing.
    var countsAsGroup: Bool { state != .ringing && state != .ended }

    /// Takes part in the audio session: not on hold, and active or an outgoing call whose start was fulfilled.
    var wantsAudio: Bool {
        guard !onHold, !hasEnded else { return false }
        return state == .active || (outgoing && startFulfilled && (state == .dialing || state == .connecting))
    }

    mutating func apply(_ update: CallUpdate) {
        if let handle = update.handle { self.handle = handle }
        if let name = update.localizedCallerName { callerName = name }
        if let value = update.supportsHolding { supportsHolding = value }
        if let value = update.supportsGrouping { supportsGrouping = value }
        if let value = update.supportsUngrouping { supportsUngrouping = value }
        if let value = update.supportsDTMF { supportsDTMF = value }
        if let value = update.hasVideo { hasVideo = value }
    }

    /// Whether the call differs from `other` in anything its observers see: in every field but the
    /// bookkeeping below, which emits no `callChanged` alone. Which of these fields the API
    /// publishes, and how, is the service's (MonkeyCallAPI's `CallRecord`), not the core's.
    func publishedDiffers(from other: Call) -> Bool {
        var other = other
        other.wasAnswered = wasAnswered
        other.startFulfilled = startFulfilled
        other.heldBySystemFor = heldBySystemFor
        return self != other
    }
}
