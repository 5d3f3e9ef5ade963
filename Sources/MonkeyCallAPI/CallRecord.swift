import DBus

extension Telephony1 {
    /// A call as the API publishes it: the `Call` object's properties as Swift values. Its fields
    /// are declared once, in `fields`; from that table come the `Call` interface's properties (and
    /// so the XML), `properties` (`GetAll`, `InterfacesAdded`), `changes(from:)`
    /// (`PropertiesChanged`), and the reading of a call's properties by every client
    /// (MonkeyCallClient's `CallSnapshot`, MonkeyCallKit's `CXCall`).
    ///
    /// The service fills every field; a record read from properties keeps the default of each
    /// one it lacks or cannot read (nil for a word this side does not know: a newer service's).
    public struct CallRecord: Sendable, Equatable {
        /// In lower case.
        public var uuid = ""
        /// nil only when not read.
        public var provider: ObjectPath?
        public var providerName = ""
        public var handle = ""
        public var handleType: HandleType? = .generic
        public var callerName = ""
        public var outgoing = false
        public var state: CallState?
        public var onHold = false
        public var muted = false
        public var silenced = false
        public var hasConnected = false
        public var hasEnded = false
        public var hasVideo = false
        /// "" when the call is in no group.
        public var group = ""
        public var supportsHolding = true
        public var supportsGrouping = false
        public var supportsUngrouping = false
        public var supportsDTMF = true
        /// Microseconds since the Unix epoch; 0: not yet.
        public var startedAt: UInt64 = 0
        public var connectedAt: UInt64 = 0
        public var endedAt: UInt64 = 0

        public init() {}

        /// The call's published fields, in the order of the XML: each one's property (name, D-Bus
        /// type, documentation) and where it is in the record. The one list of them.
        public static let fields: [Field] = [
            .field("UUID", \.uuid, doc: """
                the call's UUID, in lower case.
                """),
            .field("Provider", \.provider, absent: .root, doc: """
                path of the provider that owns the call.
                """),
            .field("ProviderName", \.providerName, doc: """
                the owning provider's Name.
                """),
            .field("Handle", \.handle, doc: """
                the remote party's handle.
                """),
            .word("HandleType", \.handleType, doc: """
                \(HandleType.generic.quoted), \(HandleType.phoneNumber.quoted) or \(HandleType.emailAddress.quoted).
                """),
            .field("CallerName", \.callerName, doc: """
                the caller's name as the user knows it: a favorite's
                name, else a contact's in the user's address book, else the name in
                the provider's update, else an enabled call directory's label, else "".
                A sandboxed app reads back of its own call only what it supplied or
                its own directory gave.
                """),
            .field("Outgoing", \.outgoing, doc: """
                true for an outgoing call, false for an incoming one.
                """),
            .word("State", \.state, doc: """
                \(CallState.ringing.quoted), \(CallState.dialing.quoted), \(CallState.connecting.quoted), \(CallState.active.quoted), \(CallState.held.quoted) or \(CallState.ended.quoted).
                """),
            .field("OnHold", \.onHold, doc: """
                whether the call is on hold.
                """),
            .field("Muted", \.muted, doc: """
                whether the call is muted.
                """),
            .field("Silenced", \.silenced, doc: """
                whether the call's ringtone was silenced (Silence, the
                notification's Silence button, or its dismissal).
                """),
            .field("HasConnected", \.hasConnected, doc: """
                whether the call has connected.
                """),
            .field("HasEnded", \.hasEnded, doc: """
                whether the call has ended.
                """),
            .field("HasVideo", \.hasVideo, doc: """
                whether the call has video.
                """),
            .field("Group", \.group, doc: """
                the call group the call belongs to; "" when none.
                """),
            .field("SupportsHolding", \.supportsHolding, doc: """
                whether the call can be held (default true).
                """),
            .field("SupportsGrouping", \.supportsGrouping, doc: """
                whether the call can be grouped (default false).
                """),
            .field("SupportsUngrouping", \.supportsUngrouping, doc: """
                whether the call can leave its group (default
                false).
                """),
            .field("SupportsDTMF", \.supportsDTMF, doc: """
                whether the call can play DTMF (default true).
                """),
            .field("StartedAt", \.startedAt, doc: """
                when the call started, in microseconds since the epoch.
                """),
            .field("ConnectedAt", \.connectedAt, doc: """
                when the call connected; 0 if it has not.
                """),
            .field("EndedAt", \.endedAt, doc: """
                when the call ended; 0 if it has not.
                """),
        ]
    }
}

extension Telephony1.CallRecord {
    public typealias Record = Telephony1.CallRecord

    /// One published field: its property and where it is in the record.
    public struct Field: Sendable {
        /// The `Call` interface's property.
        public let property: any MemberSpec
        public let name: String
        /// Its D-Bus type.
        public let signature: Signature
        let keyPath: PartialKeyPath<Record> & Sendable
        /// The field's value on the wire.
        public let encode: @Sendable (Record) -> DBusValue
        /// Sets the field from a value on the wire; a value of another type leaves it as it is.
        let decode: @Sendable (inout Record, DBusValue) -> Void
        /// Whether two records' values of the field differ (compared as Swift values, not encoded).
        let differs: @Sendable (_ new: UnsafeRawPointer, _ old: UnsafeRawPointer) -> Bool

        /// A field of a D-Bus type.
        static func field<T: DBusRepresentable & Equatable & Sendable>(_ name: String, _ path: WritableKeyPath<Record, T> & Sendable,
                                                                      doc: String) -> Field {
            Field(property: PropertySpec(Telephony1.Call.interface, name, T.self, doc: doc), name: name, signature: T.dbusSignature, keyPath: path,
                  encode: reading(path) { $0.dbusValue },
                  decode: { record, value in if let value = try? T(dbusValue: value.unwrappedVariant) { record[keyPath: path] = value } },
                  differs: comparing(path))
        }

        /// A field of a D-Bus type that a record read from properties may lack: nil goes out as `absent`.
        static func field<T: DBusRepresentable & Equatable & Sendable>(_ name: String, _ path: WritableKeyPath<Record, T?> & Sendable,
                                                                      absent: T, doc: String) -> Field {
            Field(property: PropertySpec(Telephony1.Call.interface, name, T.self, doc: doc), name: name, signature: T.dbusSignature, keyPath: path,
                  encode: reading(path) { ($0 ?? absent).dbusValue },
                  decode: { record, value in if let value = try? T(dbusValue: value.unwrappedVariant) { record[keyPath: path] = value } },
                  differs: comparing(path))
        }

        /// A field that is one of the shared vocabulary's words, a string on the wire (its raw
        /// value); a word this side does not know reads as nil.
        static func word<W: RawRepresentable & Equatable & Sendable>(_ name: String, _ path: WritableKeyPath<Record, W?> & Sendable,
                                                                    doc: String) -> Field where W.RawValue == String {
            Field(property: PropertySpec(Telephony1.Call.interface, name, String.self, doc: doc), name: name, signature: String.dbusSignature, keyPath: path,
                  encode: reading(path) { .string($0?.rawValue ?? "") },
                  decode: { record, value in if case .string(let word) = value.unwrappedVariant { record[keyPath: path] = W(rawValue: word) } },
                  differs: comparing(path))
        }

        /// The field's value on the wire, read in place (`StoredField`).
        private static func reading<T>(_ path: KeyPath<Record, T> & Sendable, _ encode: @escaping @Sendable (T) -> DBusValue) -> @Sendable (Record) -> DBusValue {
            let read = StoredField.reader(path)
            return { record in withUnsafePointer(to: record) { encode(read($0)) } }
        }

        /// Whether two records' values of the field differ, read in place (`StoredField`).
        private static func comparing<T: Equatable>(_ path: KeyPath<Record, T> & Sendable) -> @Sendable (UnsafeRawPointer, UnsafeRawPointer) -> Bool {
            let read = StoredField.reader(path)
            return { read($0) != read($1) }
        }
    }

    /// The field at `keyPath`.
    public static func field(_ keyPath: PartialKeyPath<Record>) -> Field {
        guard let field = fields.first(where: { $0.keyPath == keyPath }) else { preconditionFailure("\(keyPath) is not a published field") }
        return field
    }

    /// The field named so (a property's name), if it is one.
    public static func field(named name: String) -> Field? { fieldsByName[name] }
    private static let fieldsByName = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0) })

    /// The property of the field at `keyPath`, typed as on the wire (`Telephony1.Call.state`).
    static func property<T: DBusRepresentable>(_ keyPath: PartialKeyPath<Record>) -> PropertySpec<T> {
        guard let property = field(keyPath).property as? PropertySpec<T> else {
            preconditionFailure("\(keyPath) is not of type \(T.dbusSignature) on the wire")
        }
        return property
    }

    /// Every field as the `Call` object's properties, by name.
    public var properties: [String: DBusValue] {
        var properties: [String: DBusValue] = [:]
        // Room for them at once, not grown (and rehashed) as they come.
        properties.reserveCapacity(Self.fields.count)
        for field in Self.fields { properties[field.name] = field.encode(self) }
        return properties
    }

    /// The fields whose values differ from `old`'s.
    public func changedFields(from old: Record) -> [Field] {
        withUnsafePointer(to: self) { new in withUnsafePointer(to: old) { old in Self.fields.filter { $0.differs(new, old) } } }
    }

    /// What changed since `old`, by property name: `PropertiesChanged`'s values. Only those fields
    /// are encoded.
    public func changes(from old: Record) -> [String: DBusValue] {
        var changes: [String: DBusValue] = [:]
        for field in changedFields(from: old) { changes[field.name] = field.encode(self) }
        return changes
    }

    /// The record of a call's properties (`GetAll`, `GetManagedObjects`, `InterfacesAdded`).
    public init(properties: [String: DBusValue]) {
        self.init()
        apply(properties)
    }

    /// Takes the values of these properties (`PropertiesChanged`); other names are ignored.
    public mutating func apply(_ properties: [String: DBusValue]) {
        for (name, value) in properties {
            Self.field(named: name)?.decode(&self, value)
        }
    }
}
