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
        guard let name = try dict.get("Name", as: String.self) else {
            throw DBusError.invalidArgs("configuration key 'Name' (s) is required")
        }
        var configuration = ProviderConfiguration(name: name)
        if let groups = try dict.get("MaximumCallGroups", as: UInt32.self) { configuration.maximumCallGroups = Int(groups) }
        if let perGroup = try dict.get("MaximumCallsPerCallGroup", as: UInt32.self) { configuration.maximumCallsPerCallGroup = Int(perGroup) }
        configuration.supportsVideo = try dict.get("SupportsVideo", default: false)
        if let types = try dict.get("SupportedHandleTypes", as: [String].self) {
            var set = Set<HandleType>()
            for type in types { set.insert(try handleType(type)) }
            configuration.supportedHandleTypes = set
        }
        configuration.includesCallsInRecents = try dict.get("IncludesCallsInRecents", default: true)
        configuration.ringtoneSound = try dict.get("RingtoneSound", default: "")
        configuration.iconName = try dict.get("IconName", default: "")
        configuration.iconData = try dict.get("IconData", default: [UInt8]())
        configuration.urlSchemes = try dict.get("URLSchemes", default: [String]())
        configuration.desktopEntry = try dict.get("DesktopEntry", default: "")
        return configuration
    }

    static func update(_ entries: [String: DBusValue]) throws(DBusError) -> CallUpdate {
        let dict = VarDict(entries, context: "update")
        var update = CallUpdate()
        if let value = try dict.get("Handle", as: String.self) {
            update.handle = Handle(type: try handleType(try dict.get("HandleType", default: "generic")), value: value)
        } else if dict.contains("HandleType") {
            throw DBusError.invalidArgs("update key 'HandleType' needs 'Handle' with it")
        }
        update.localizedCallerName = try dict.get("LocalizedCallerName", as: String.self)
        update.supportsHolding = try dict.get("SupportsHolding", as: Bool.self)
        update.supportsGrouping = try dict.get("SupportsGrouping", as: Bool.self)
        update.supportsUngrouping = try dict.get("SupportsUngrouping", as: Bool.self)
        update.supportsDTMF = try dict.get("SupportsDTMF", as: Bool.self)
        update.hasVideo = try dict.get("HasVideo", as: Bool.self)
        return update
    }

    /// One `(kind, args)` entry of `RequestTransaction`.
    static func action(kind: String, _ entries: [String: DBusValue]) throws(DBusError) -> ActionRequest {
        let dict = VarDict(entries, context: "\(kind) action")
        guard let uuidText = try dict.get("CallUUID", as: String.self) else {
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
            let handle = Handle(type: try handleType(try dict.get("HandleType", default: "generic")), value: try required("Handle", String.self))
            var provider: ProviderID?
            if let path = try dict.get("Provider", as: ObjectPath.self) {
                guard let id = Telephony1.providerID(from: path) else {
                    throw APIError.unknownCallProvider("\(path) is not a provider")
                }
                provider = ProviderID(id)
            }
            return .start(uuid, handle: handle, video: try dict.get("Video", default: false),
                          contactIdentifier: try dict.get("ContactIdentifier", default: ""), provider: provider)
        case "answer": return .answer(uuid)
        case "end": return .end(uuid)
        case "set-held": return .setHeld(uuid, try required("OnHold", Bool.self))
        case "set-muted": return .setMuted(uuid, try required("Muted", Bool.self))
        case "set-group":
            let other = try required("GroupWith", String.self)
            return .setGroup(uuid, with: other.isEmpty ? nil : try self.uuid(other, "GroupWith call UUID"))
        case "play-dtmf":
            let typeName = try dict.get("Type", default: DTMFType.singleTone.rawValue)
            guard let type = DTMFType(rawValue: typeName) else {
                throw DBusError.invalidArgs("DTMF type '\(typeName.prefix(64))' is not one of single-tone, soft-pause, hard-pause")
            }
            return .playDTMF(uuid, digits: try required("Digits", String.self), type: type)
        default:
            throw APIError.invalidAction("unknown action kind '\(kind.prefix(64))' (start, answer, end, set-held, set-muted, set-group, play-dtmf)")
        }
    }
}

extension UUID {
    /// The API's form: lower case.
    var apiString: String { uuidString.lowercased() }
}
