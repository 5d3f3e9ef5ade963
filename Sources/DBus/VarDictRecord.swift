/// A record that travels as an option dictionary (`a{sv}`), declared once, field by field (key,
/// type, default, whether required), as zvariant's `SerializeDict` does: decoding, encoding and
/// the error messages all come from that one declaration. Unknown keys are ignored (forward
/// compatibility); a known key with the wrong type is `InvalidArgs` naming the key.
public protocol VarDictRecord: DBusRepresentable, Sendable {
    /// The record with every field at its default.
    init()
    /// What the record is called in error messages ("configuration", "update").
    static var context: String { get }
    /// The fields, in order; declare it as a `static let`, built once (encoding and decoding
    /// walk it at each use).
    static var fields: [RecordField<Self>] { get }
}

/// One field of a `VarDictRecord`: its key, its D-Bus type and where it lives in the record.
///
/// Sending, it reads the field in the record's bytes (`StoredField`), given the record's address:
/// a key path read goes through the runtime, and `PerformAction`'s twelve optional arguments made
/// its `a{sv}`'s entries cost 20,600 instructions a signal in the lifecycle's profile (issue 55).
/// Reading one sets only the fields that came, through their key paths.
public struct RecordField<Record>: Sendable {
    public let key: String
    public let signature: Signature
    let isRequired: Bool
    let decode: @Sendable (inout Record, DBusValue) throws(DBusError) -> Void
    /// nil: not sent (an optional field that is not set).
    let encode: @Sendable (UnsafeRawPointer) -> DBusValue?
    /// Writes the field's entry (key, variant) straight to the wire, when it is sent
    /// (`VarDictRecord.write`).
    let write: @Sendable (UnsafeRawPointer, inout WireWriter) throws(WireFailure) -> Void

    /// A field that is always sent; when absent on receipt, the record keeps its default.
    public static func field<T: DBusRepresentable>(_ key: String, _ path: WritableKeyPath<Record, T> & Sendable, required: Bool = false) -> Self {
        let read = StoredField.reader(path)
        let signature = T.dbusSignature
        return RecordField(key: key, signature: signature, isRequired: required,
                           decode: { (record: inout Record, value: DBusValue) throws(DBusError) in record[keyPath: path] = try T(dbusValue: value) },
                           encode: { read($0).dbusValue },
                           write: { (record: UnsafeRawPointer, writer: inout WireWriter) throws(WireFailure) in
                               try writer.putVariantEntry(key, signature, read(record).dbusValue)
                           })
    }

    /// A field that is sent only when set.
    public static func optional<T: DBusRepresentable>(_ key: String, _ path: WritableKeyPath<Record, T?> & Sendable, required: Bool = false) -> Self {
        let read = StoredField.reader(path)
        let signature = T.dbusSignature
        return RecordField(key: key, signature: signature, isRequired: required,
                           decode: { (record: inout Record, value: DBusValue) throws(DBusError) in record[keyPath: path] = try T(dbusValue: value) },
                           encode: { read($0)?.dbusValue },
                           write: { (record: UnsafeRawPointer, writer: inout WireWriter) throws(WireFailure) in
                               if let value = read(record) { try writer.putVariantEntry(key, signature, value.dbusValue) }
                           })
    }
}

extension VarDictRecord {
    /// Reads the record from an option dictionary's entries.
    public init(entries: [String: DBusValue]) throws(DBusError) {
        self.init()
        for field in Self.fields {
            guard let value = entries[field.key] else {
                if field.isRequired { throw DBusError.invalidArgs("\(Self.context) key '\(field.key)' (\(field.signature)) is required") }
                continue
            }
            do throws(DBusError) {
                try field.decode(&self, value)
            } catch {
                throw DBusError.invalidArgs("\(Self.context) key '\(field.key)' must be of type '\(field.signature)', got '\(value.signature)'")
            }
        }
    }

    /// The record as an option dictionary's entries: every field that is set.
    public var entries: [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        entries.reserveCapacity(Self.fields.count)
        forEachSent { entries[$0] = $1 }
        return entries
    }

    /// Each field that is sent, with its key, in the fields' order, read in place (`RecordField.encode`).
    private func forEachSent(_ body: (_ key: String, _ value: DBusValue) -> Void) {
        withUnsafePointer(to: self) { record in
            for field in Self.fields {
                if let value = field.encode(UnsafeRawPointer(record)) { body(field.key, value) }
            }
        }
    }

    public static var dbusSignature: Signature { "a{sv}" }

    /// The same value as `.vardict(entries)`, the entries in key order, made without that dictionary.
    public var dbusValue: DBusValue {
        var sent: [(key: String, value: DBusValue)] = []
        forEachSent { sent.append(($0, $1)) }
        sent.sort { $0.key < $1.key }
        return .dictionary(key: "s", value: "v", sent.map { (key: .string($0.key), value: .variant($0.value)) })
    }

    /// Writes records as an `aa{sv}` straight to the wire, the same bytes as their `dbusValue`s
    /// (keys in order), without building those: for a large reply (a page of Recents), where the
    /// dictionaries, their sorting and the values' boxes cost more than the writing (issue 55).
    static func write(_ records: some Collection<Self>, to writer: inout WireWriter) throws(WireFailure) {
        let fields = Self.fields.sorted { $0.key < $1.key }
        try writer.putArray(alignment: 4) { (writer) throws(WireFailure) in
            for var record in records {
                try withUnsafePointer(to: &record) { (record) throws(WireFailure) in
                    try writer.putArray(alignment: 8) { (writer) throws(WireFailure) in
                        for field in fields { try field.write(UnsafeRawPointer(record), &writer) }
                    }
                }
            }
        }
    }

    public init(dbusValue: DBusValue) throws(DBusError) {
        guard let entries = dbusValue.vardict else {
            throw DBusError.invalidArgs("\(Self.context) must be of type 'a{sv}', got '\(dbusValue.signature)'")
        }
        try self.init(entries: entries)
    }
}

/// Reading a field of a record declared as a table of key paths (`VarDictRecord`,
/// `Telephony1.CallRecord`) without the key path at each read.
public enum StoredField {
    /// Reads the field at `path` of the record at an address: for a stored property of a struct,
    /// straight from its offset (a copy of the field alone, retained as any); else through the key
    /// path. A key path read goes through the runtime's `swift_getAtKeyPath`, about a thousand
    /// instructions: a quarter of what the daemon spent answering `Recents.List(50)`, and nearly
    /// all of comparing two records of a call field by field (issue 55).
    public static func reader<Record, T>(_ path: KeyPath<Record, T> & Sendable) -> @Sendable (UnsafeRawPointer) -> T {
        guard let offset = MemoryLayout<Record>.offset(of: path) else {
            return { $0.assumingMemoryBound(to: Record.self).pointee[keyPath: path] }
        }
        return { $0.load(fromByteOffset: offset, as: T.self) }
    }
}
