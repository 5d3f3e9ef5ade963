import DBus
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// Reading the API's arguments into core types; every mistake is `InvalidArgs` naming it.
enum Decode {
    static func uuid(_ text: String, _ what: String = "call UUID") throws(DBusError) -> UUID {
        // 8-4-4-4-12 hex digits in any letter case; Foundation accepts both cases.
        guard let uuid = UUID(apiString: text) else {
            throw DBusError.invalidArgs("'\(text.prefix(64))' is not a \(what) (8-4-4-4-12 hexadecimal digits)")
        }
        return uuid
    }

    static func configuration(_ entries: [String: DBusValue]) throws(DBusError) -> ProviderConfiguration {
        let record = try Telephony1.ProviderConfiguration(entries: entries)
        var configuration = ProviderConfiguration(name: record.name)
        configuration.maximumCallGroups = Int(record.maximumCallGroups)
        configuration.maximumCallsPerCallGroup = Int(record.maximumCallsPerCallGroup)
        configuration.supportsVideo = record.supportsVideo
        var types = Set<HandleType>()
        for type in record.supportedHandleTypes { types.insert(try HandleType.named(type)) }
        configuration.supportedHandleTypes = types
        configuration.includesCallsInRecents = record.includesCallsInRecents
        configuration.ringtoneSound = record.ringtoneSound ?? ""
        configuration.iconName = record.iconName ?? ""
        configuration.iconData = record.iconData ?? []
        configuration.urlSchemes = record.urlSchemes
        configuration.desktopEntry = record.desktopEntry ?? ""
        return configuration
    }

    /// One `(kind, args)` entry of `RequestTransaction`.
    static func action(kind: String, _ entries: [String: DBusValue]) throws(DBusError) -> ActionRequest {
        guard Telephony1.Action.Kind.Name(rawValue: kind) != nil else {
            throw APIError.invalidAction("unknown action kind '\(kind.prefix(64))' (\(Telephony1.Action.Kind.names.joined(separator: ", ")))")
        }
        return try action(Telephony1.Action(kind: kind, arguments: entries))
    }

    static func action(_ action: Telephony1.Action) throws(DBusError) -> ActionRequest {
        let uuid = try self.uuid(action.callUUID)
        switch action.kind {
        case .start(let handle, let type, let video, let contactIdentifier, let path):
            var provider: ProviderID?
            if let path {
                guard let id = Telephony1.providerID(from: path) else {
                    throw APIError.unknownCallProvider("\(path) is not a provider")
                }
                provider = ProviderID(id)
            }
            return .start(uuid, handle: Handle(type: try HandleType.named(type), value: handle), video: video,
                          contactIdentifier: contactIdentifier, provider: provider)
        case .answer: return .answer(uuid)
        case .end: return .end(uuid)
        case .setHeld(let onHold): return .setHeld(uuid, onHold)
        case .setMuted(let muted): return .setMuted(uuid, muted)
        case .setGroup(let other): return .setGroup(uuid, with: other.isEmpty ? nil : try self.uuid(other, "GroupWith call UUID"))
        case .playDTMF(let digits, let typeName):
            guard let type = DTMFType(rawValue: typeName) else {
                throw DBusError.invalidArgs("DTMF type '\(typeName.prefix(64))' is not one of single-tone, soft-pause, hard-pause")
            }
            return .playDTMF(uuid, digits: digits, type: type)
        }
    }
}
