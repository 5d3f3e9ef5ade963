import DBus
import MonkeyCallAPI

/// A call object as last read: its fields (`Telephony1.CallRecord`), each one readable on the
/// snapshot itself (`call.state`, `call.callerName`, `call.supportsHolding`).
@dynamicMemberLookup
public struct CallSnapshot: Sendable, Equatable {
    public let path: ObjectPath
    public var record: Telephony1.CallRecord

    public init(path: ObjectPath, record: Telephony1.CallRecord) {
        self.path = path
        self.record = record
    }

    /// The call of these properties (`GetAll`, `GetManagedObjects`, `InterfacesAdded`).
    public init(path: ObjectPath, properties: [String: DBusValue]) {
        self.init(path: path, record: Telephony1.CallRecord(properties: properties))
    }

    /// A field of the call (nil `state` for a state this client does not know: a newer service's).
    public subscript<T>(dynamicMember field: KeyPath<Telephony1.CallRecord, T>) -> T { record[keyPath: field] }

    /// The call's properties as the service publishes them; what is merged into them (a
    /// `PropertiesChanged`) changes the record.
    public var properties: [String: DBusValue] {
        get { record.properties }
        set { record.apply(newValue) }
    }

    /// A property, typed as on the wire.
    public subscript<T: DBusRepresentable>(_ property: PropertySpec<T>) -> T? {
        Telephony1.CallRecord.field(named: property.name).flatMap { try? T(dbusValue: $0.encode(record)) }
    }
}
