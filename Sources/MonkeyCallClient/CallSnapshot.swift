import DBus
import MonkeyCallAPI

/// A call object's properties, read through the contract's specs.
public struct CallSnapshot: Sendable, Equatable {
    public let path: ObjectPath
    public var properties: [String: DBusValue]

    public init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        self.properties = properties
    }

    public subscript<T: DBusRepresentable>(_ property: PropertySpec<T>) -> T? {
        properties[property.name].flatMap { try? T(dbusValue: $0.unwrappedVariant) }
    }

    public var uuid: String { self[Telephony1.Call.uuid] ?? "" }
    /// nil for a state this client does not know (a newer service's).
    public var state: CallState? { self[Telephony1.Call.state].flatMap(CallState.init(rawValue:)) }
    public var handle: String { self[Telephony1.Call.handle] ?? "" }
    public var callerName: String { self[Telephony1.Call.callerName] ?? "" }
    public var providerName: String { self[Telephony1.Call.providerName] ?? "" }
    public var outgoing: Bool { self[Telephony1.Call.outgoing] ?? false }
    public var onHold: Bool { self[Telephony1.Call.onHold] ?? false }
    public var muted: Bool { self[Telephony1.Call.muted] ?? false }
    public var silenced: Bool { self[Telephony1.Call.silenced] ?? false }
    public var hasEnded: Bool { self[Telephony1.Call.hasEnded] ?? false }
    public var supportsHolding: Bool { self[Telephony1.Call.supportsHolding] ?? true }
    public var supportsGrouping: Bool { self[Telephony1.Call.supportsGrouping] ?? false }
    public var group: String { self[Telephony1.Call.group] ?? "" }
    public var provider: ObjectPath? { self[Telephony1.Call.provider] }
    public var supportsDTMF: Bool { self[Telephony1.Call.supportsDTMF] ?? true }
    public var startedAt: UInt64 { self[Telephony1.Call.startedAt] ?? 0 }
    public var connectedAt: UInt64 { self[Telephony1.Call.connectedAt] ?? 0 }
    public var endedAt: UInt64 { self[Telephony1.Call.endedAt] ?? 0 }
}
