import DBus
import FoundationEssentials
import MonkeyCallAPI

/// A call as an observer sees it (CallKit's `CXCall`): a snapshot, replaced on each change.
public final class CXCall: Sendable, Equatable, CustomStringConvertible {
    public let uuid: UUID
    public let isOutgoing: Bool
    public let isOnHold: Bool
    public let hasConnected: Bool
    public let hasEnded: Bool

    init(uuid: UUID, isOutgoing: Bool, isOnHold: Bool, hasConnected: Bool, hasEnded: Bool) {
        self.uuid = uuid
        self.isOutgoing = isOutgoing
        self.isOnHold = isOnHold
        self.hasConnected = hasConnected
        self.hasEnded = hasEnded
    }

    /// The call described by the service's `Call` properties.
    convenience init?(properties: [String: DBusValue]) {
        typealias API = Telephony1.Call
        guard case .string(let id)? = properties[API.uuid.name], let uuid = UUID(uuidString: id) else { return nil }
        func flag(_ property: PropertySpec<Bool>) -> Bool { if case .bool(let value)? = properties[property.name] { value } else { false } }
        self.init(uuid: uuid, isOutgoing: flag(API.outgoing), isOnHold: flag(API.onHold),
                  hasConnected: flag(API.hasConnected), hasEnded: flag(API.hasEnded))
    }

    /// The same call, ended.
    func ended() -> CXCall {
        CXCall(uuid: uuid, isOutgoing: isOutgoing, isOnHold: isOnHold, hasConnected: hasConnected, hasEnded: true)
    }

    /// Whether both are the same call (by UUID), as CallKit compares calls.
    public func isEqual(to call: CXCall) -> Bool { uuid == call.uuid }

    public static func == (lhs: CXCall, rhs: CXCall) -> Bool {
        lhs.uuid == rhs.uuid && lhs.isOutgoing == rhs.isOutgoing && lhs.isOnHold == rhs.isOnHold
            && lhs.hasConnected == rhs.hasConnected && lhs.hasEnded == rhs.hasEnded
    }

    public var description: String {
        "CXCall \(uuid.uuidString.lowercased())\(isOutgoing ? " outgoing" : " incoming")\(isOnHold ? " on hold" : "")"
            + "\(hasConnected ? " connected" : "")\(hasEnded ? " ended" : "")"
    }
}
