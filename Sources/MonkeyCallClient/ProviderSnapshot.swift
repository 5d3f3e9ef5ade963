import DBus
import MonkeyCallAPI

/// A provider object's properties.
public struct ProviderSnapshot: Sendable, Equatable {
    public let path: ObjectPath
    public let properties: [String: DBusValue]

    public var name: String { properties[Telephony1.Provider.name.name].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
    public var appID: String { properties[Telephony1.Provider.appId.name].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? "" }
    public var configuration: [String: DBusValue] { properties[Telephony1.Provider.configuration.name]?.unwrappedVariant.vardict ?? [:] }
    /// The handle types it calls (all three when it did not say).
    public var handleTypes: [String] {
        configuration[Telephony1.Key.supportedHandleTypes].flatMap { try? [String](dbusValue: $0.unwrappedVariant) } ?? Telephony1.HandleTypes.all
    }
}
