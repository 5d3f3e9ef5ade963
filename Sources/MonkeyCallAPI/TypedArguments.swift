import DBus
import FoundationEssentials

// The contract's own types as method arguments: a handler is given a `UUID` and a `CallUpdate`,
// read off the wire where the handler's arguments are read (`Args.read`), and a client sends them as they
// are. Each is spelled on the wire as before (`s`, `a{sv}`): the XML and every other client see
// no change.

/// A call's or an action's UUID: 8-4-4-4-12 hexadecimal digits, read in either case, sent in lower
/// case (`UUID.apiString`); anything else is `InvalidArgs`.
extension UUID: DBusRepresentable {
    public static var dbusSignature: Signature { "s" }
    public var dbusValue: DBusValue { .string(apiString) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let text) = dbusValue else {
            throw DBusError.invalidArgs("expected a UUID of type 's', got '\(dbusValue.signature)'")
        }
        guard let uuid = UUID(apiString: text) else {
            throw DBusError.invalidArgs("'\(text.prefix(64))' is not a UUID (8-4-4-4-12 hexadecimal digits)")
        }
        self = uuid
    }
}

extension HandleType {
    /// The handle type a caller named, or `InvalidArgs` listing the three.
    public static func named(_ text: String) throws(DBusError) -> HandleType {
        guard let type = HandleType(rawValue: text) else {
            throw DBusError.invalidArgs("handle type '\(text.prefix(64))' is not one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return type
    }
}

/// A provider's report of a call (`ReportNewIncomingCall`, `ReportCallUpdated`), as its `a{sv}`:
/// the keys of `Telephony1.CallUpdate`, only those set. `HandleType` without `Handle` is
/// `InvalidArgs`; `Handle` alone is a generic handle.
extension CallUpdate: DBusRepresentable {
    public static var dbusSignature: Signature { Telephony1.CallUpdate.dbusSignature }

    public init(dbusValue: DBusValue) throws(DBusError) {
        let record = try Telephony1.CallUpdate(dbusValue: dbusValue)
        var handle: Handle?
        if let value = record.handle {
            handle = Handle(type: try HandleType.named(record.handleType ?? HandleType.generic.rawValue), value: value)
        } else if record.handleType != nil {
            throw DBusError.invalidArgs("update key '\(Telephony1.Key.handleType)' needs '\(Telephony1.Key.handle)' with it")
        }
        self.init(handle: handle, localizedCallerName: record.localizedCallerName, supportsHolding: record.supportsHolding,
                  supportsGrouping: record.supportsGrouping, supportsUngrouping: record.supportsUngrouping,
                  supportsDTMF: record.supportsDTMF, hasVideo: record.hasVideo)
    }

    public var dbusValue: DBusValue { record.dbusValue }

    /// The update as the API's record: its keys, those set.
    var record: Telephony1.CallUpdate {
        var record = Telephony1.CallUpdate()
        record.handle = handle?.value
        record.handleType = handle?.type.rawValue
        record.localizedCallerName = localizedCallerName
        record.supportsHolding = supportsHolding
        record.supportsGrouping = supportsGrouping
        record.supportsUngrouping = supportsUngrouping
        record.supportsDTMF = supportsDTMF
        record.hasVideo = hasVideo
        return record
    }
}
