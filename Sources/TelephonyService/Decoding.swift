import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

/// Reading the API's arguments into core types; every mistake is `InvalidArgs` naming it.
enum Decode {
    static func uuid(_ text: String, _ what: String = "call UUID") throws(DBusError) -> UUID {
        // 8-4-4-4-12 hex digits in any letter case; Foundation accepts both cases.
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else {
            throw DBusError.invalidArgs("'\(text.prefix(64))' is not a \(what) (8-4-4-4-12 hexadecimal digits)")
        }
        return uuid
    }

    static func handleType(_ text: String) throws(DBusError) -> HandleType {
        guard let type = HandleType(rawValue: text) else {
            throw DBusError.invalidArgs("handle type '\(text.prefix(64))' is not one of generic, phone-number, email-address")
        }
        return type
    }

    static func configuration(_ entries: [String: DBusValue]) throws(DBusError) -> ProviderConfiguration {
        let dict = VarDict(entries, context: "configuration")
        guard let name = try dict.get(Telephony1.Key.name, as: String.self) else {
            throw DBusError.invalidArgs("configuration key 'Name' (s) is required")
        }
        var configuration = ProviderConfiguration(name: name)
        if let groups = try dict.get(Telephony1.Key.maximumCallGroups, as: UInt32.self) { configuration.maximumCallGroups = Int(groups) }
        if let perGroup = try dict.get(Telephony1.Key.maximumCallsPerCallGroup, as: UInt32.self) { configuration.maximumCallsPerCallGroup = Int(perGroup) }
        configuration.supportsVideo = try dict.get(Telephony1.Key.supportsVideo, default: false)
        if let types = try dict.get(Telephony1.Key.supportedHandleTypes, as: [String].self) {
            var set = Set<HandleType>()
            for type in types { set.insert(try handleType(type)) }
            configuration.supportedHandleTypes = set
        }
        configuration.includesCallsInRecents = try dict.get(Telephony1.Key.includesCallsInRecents, default: true)
        configuration.ringtoneSound = try dict.get(Telephony1.Key.ringtoneSound, default: "")
        configuration.iconName = try dict.get(Telephony1.Key.iconName, default: "")
        configuration.iconData = try dict.get(Telephony1.Key.iconData, default: [UInt8]())
        configuration.urlSchemes = try dict.get(Telephony1.Key.urlSchemes, default: [String]())
        configuration.desktopEntry = try dict.get(Telephony1.Key.desktopEntry, default: "")
        return configuration
    }

    static func update(_ entries: [String: DBusValue]) throws(DBusError) -> CallUpdate {
        let dict = VarDict(entries, context: "update")
        var update = CallUpdate()
        if let value = try dict.get(Telephony1.Key.handle, as: String.self) {
            update.handle = Handle(type: try handleType(try dict.get(Telephony1.Key.handleType, default: "generic")), value: value)
        } else if dict.contains(Telephony1.Key.handleType) {
            throw DBusError.invalidArgs("update key 'HandleType' needs 'Handle' with it")
        }
        update.localizedCallerName = try dict.get(Telephony1.Key.localizedCallerName, as: String.self)
        update.supportsHolding = try dict.get(Telephony1.Key.supportsHolding, as: Bool.self)
        update.supportsGrouping = try dict.get(Telephony1.Key.supportsGrouping, as: Bool.self)
        update.supportsUngrouping = try dict.get(Telephony1.Key.supportsUngrouping, as: Bool.self)
        update.supportsDTMF = try dict.get(Telephony1.Key.supportsDTMF, as: Bool.self)
        update.hasVideo = try dict.get(Telephony1.Key.hasVideo, as: Bool.self)
        return update
    }

    /// One `(kind, args)` entry of `RequestTransaction`.
    static func action(kind: String, _ entries: [String: DBusValue]) throws(DBusError) -> ActionRequest {
        let dict = VarDict(entries, context: "\(kind) action")
        guard let uuidText = try dict.get(Telephony1.Key.callUUID, as: String.self) else {
            throw DBusError.invalidArgs("\(kind) action needs 'CallUUID' (s)")
        }
        let uuid = try self.uuid(uuidText)
        func required<T: DBusRepresentable>(_ key: String, _ type: T.Type) throws(DBusError) -> T {
            guard let value = try dict.get(key, as: T.self) else {
                throw DBusError.invalidArgs("\(kind) action needs '\(key)' (\(T.dbusSignature))")
            }
            return value
        }
        switch kind {
        case "start":
            let handle = Handle(type: try handleType(try dict.get(Telephony1.Key.handleType, default: "generic")), value: try required(Telephony1.Key.handle, String.self))
            var provider: ProviderID?
            if let path = try dict.get(Telephony1.Key.provider, as: ObjectPath.self) {
                guard let id = Telephony1.providerID(from: path) else {
                    throw APIError.unknownCallProvider("\(path) is not a provider")
                }
                provider = ProviderID(id)
            }
            return .start(uuid, handle: handle, video: try dict.get(Telephony1.Key.video, default: false),
                          contactIdentifier: try dict.get(Telephony1.Key.contactIdentifier, default: ""), provider: provider)
        case "answer": return .answer(uuid)
        case "end": return .end(uuid)
        case "set-held": return .setHeld(uuid, try required(Telephony1.Key.onHold, Bool.self))
        case "set-muted": return .setMuted(uuid, try required(Telephony1.Key.muted, Bool.self))
        case "set-group":
            let other = try required(Telephony1.Key.groupWith, String.self)
            return .setGroup(uuid, with: other.isEmpty ? nil : try self.uuid(other, "GroupWith call UUID"))
        case "play-dtmf":
            let typeName = try dict.get(Telephony1.Key.type, default: DTMFType.singleTone.rawValue)
            guard let type = DTMFType(rawValue: typeName) else {
                throw DBusError.invalidArgs("DTMF type '\(typeName.prefix(64))' is not one of single-tone, soft-pause, hard-pause")
            }
            return .playDTMF(uuid, digits: try required(Telephony1.Key.digits, String.self), type: type)
        default:
            throw APIError.invalidAction("unknown action kind '\(kind.prefix(64))' (start, answer, end, set-held, set-muted, set-group, play-dtmf)")
        }
    }
}

extension UUID {
    /// The API's form: lower case.
    var apiString: String { uuidString.lowercased() }
}
