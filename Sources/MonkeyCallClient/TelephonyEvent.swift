import DBus
import MonkeyCallAPI

/// What the service tells a subscriber, decoded.
public enum TelephonyEvent: Sendable, Equatable {
    /// A call or provider appeared (`InterfacesAdded`): its path and properties.
    case added(ObjectPath, [String: DBusValue])
    /// Properties of an object changed (`PropertiesChanged`; the root's `MissedCount` too).
    case changed(ObjectPath, interface: String, [String: DBusValue])
    /// A call or provider went (`InterfacesRemoved`).
    case removed(ObjectPath)
    /// `Recents.EntryAdded`.
    case recentAdded(Telephony1.RecentEntry)
    /// `AddressBook.Changed`.
    case contactsChanged
    case serviceStopped
    case serviceStarted

    init?(_ message: Message) {
        guard let path = message.path, let arguments = try? message.arguments() else { return nil }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard arguments.count == 2, case .objectPath(let object) = arguments[0], case .dictionary(_, _, let interfaces) = arguments[1] else { return nil }
            var fields: [String: DBusValue] = [:]
            for interface in interfaces { fields.merge(interface.value.vardict ?? [:]) { $1 } }
            self = .added(object, fields)
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard case .objectPath(let object)? = arguments.first else { return nil }
            self = .removed(object)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard arguments.count >= 2, case .string(let interface) = arguments[0], let changed = arguments[1].vardict else { return nil }
            self = .changed(path, interface: interface, changed)
        case (Telephony1.Recents.interface, Telephony1.Recents.entryAdded.name):
            guard let fields = arguments.first?.vardict, let entry = try? Telephony1.RecentEntry(entries: fields) else { return nil }
            self = .recentAdded(entry)
        case (Telephony1.AddressBook.interface, Telephony1.AddressBook.changed.name):
            self = .contactsChanged
        default:
            return nil
        }
    }
}
