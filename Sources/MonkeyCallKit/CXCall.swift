import FoundationEssentials
import MonkeyCallAPI

/// A call as an observer sees it (CallKit's `CXCall`): a snapshot of the service's call
/// (`Telephony1.CallRecord`), replaced on each change, seen under CallKit's names.
public final class CXCall: Sendable, Equatable, CustomStringConvertible {
    public let uuid: UUID
    /// The call's fields as the service last published them.
    let record: Telephony1.CallRecord

    public var isOutgoing: Bool { record.outgoing }
    public var isOnHold: Bool { record.onHold }
    public var hasConnected: Bool { record.hasConnected }
    public var hasEnded: Bool { record.hasEnded }

    /// The call of this record; nil when its UUID is not one.
    init?(record: Telephony1.CallRecord) {
        guard let uuid = UUID(uuidString: record.uuid) else { return nil }
        self.uuid = uuid
        self.record = record
    }

    /// The same call, ended.
    func ended() -> CXCall {
        var record = record
        record.hasEnded = true
        return CXCall(record: record) ?? self
    }

    /// Whether both are the same call (by UUID), as CallKit compares calls.
    public func isEqual(to call: CXCall) -> Bool { uuid == call.uuid }

    /// Equal when CallKit's view of them is: a change of another field (a name, muting) is no change of a `CXCall`.
    public static func == (lhs: CXCall, rhs: CXCall) -> Bool {
        lhs.uuid == rhs.uuid && lhs.isOutgoing == rhs.isOutgoing && lhs.isOnHold == rhs.isOnHold
            && lhs.hasConnected == rhs.hasConnected && lhs.hasEnded == rhs.hasEnded
    }

    public var description: String {
        "CXCall \(uuid.uuidString.lowercased())\(isOutgoing ? " outgoing" : " incoming")\(isOnHold ? " on hold" : "")"
            + "\(hasConnected ? " connected" : "")\(hasEnded ? " ended" : "")"
    }
}
