import FoundationEssentials
import MonkeyCallKit

/// One SIP call in baresip that MonkeyCall knows, and what the bridge waits for on it.
public struct BridgedCall: Sendable {
    /// baresip's id for the call (its SIP Call-ID).
    public let id: String
    public let uuid: UUID
    public let outgoing: Bool
    public var established = false
    /// baresip's mute is a toggle: the bridge keeps the state to send it only when it must change.
    public var muted = false
    /// Fulfilled by `CALL_ESTABLISHED`.
    var answer: CXAnswerCallAction?
    /// Fulfilled by `CALL_CLOSED`.
    var end: CXEndCallAction?

    public init(id: String, uuid: UUID, outgoing: Bool, established: Bool = false) {
        self.id = id
        self.uuid = uuid
        self.outgoing = outgoing
        self.established = established
    }

    /// Whether it rings here, not answered yet.
    var isRingingIncoming: Bool { !outgoing && !established }
}

/// baresip's call ids and MonkeyCall's call UUIDs, both ways.
public struct CallTable: Sendable {
    private var byID: [String: BridgedCall] = [:]
    private var idByUUID: [UUID: String] = [:]

    public init() {}

    public subscript(id id: String) -> BridgedCall? {
        get { byID[id] }
        set {
            if let old = byID[id] { idByUUID[old.uuid] = nil }
            byID[id] = newValue
            if let newValue { idByUUID[newValue.uuid] = id }
        }
    }

    public subscript(uuid uuid: UUID) -> BridgedCall? {
        get { idByUUID[uuid].flatMap { byID[$0] } }
        set {
            guard let id = idByUUID[uuid] ?? newValue?.id else { return }
            self[id: id] = newValue
        }
    }

    @discardableResult
    public mutating func remove(id: String) -> BridgedCall? {
        guard let call = byID.removeValue(forKey: id) else { return nil }
        idByUUID[call.uuid] = nil
        return call
    }

    public var ids: Set<String> { Set(byID.keys) }
    public var all: [BridgedCall] { Array(byID.values) }

    /// Whether another call than `id` rings here too: then baresip 1.0's `accept`
    /// first tries to hold that unanswered call and does nothing else.
    func hasOtherRingingIncoming(than id: String) -> Bool {
        byID.values.contains { $0.id != id && $0.isRingingIncoming }
    }

    public mutating func removeAll() {
        byID = [:]
        idByUUID = [:]
    }
}
