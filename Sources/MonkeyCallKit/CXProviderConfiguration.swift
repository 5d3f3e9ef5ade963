import DBus
import MonkeyCallAPI
import Foundation

/// How a provider presents itself to the desktop and what it supports
/// (CallKit's `CXProviderConfiguration`, with CallKit's defaults).
public final class CXProviderConfiguration: @unchecked Sendable {
    /// The app's name as the user sees it (1–64 characters).
    public var localizedName: String
    public var maximumCallGroups: Int = 2
    public var maximumCallsPerCallGroup: Int = 5
    public var supportsVideo: Bool = false
    /// All three kinds unless the app says otherwise.
    public var supportedHandleTypes: Set<CXHandle.HandleType> = Set(CXHandle.HandleType.allCases)
    public var includesCallsInRecents: Bool = true
    /// A sound file path or an XDG sound name; nil rings with `phone-incoming-call`.
    public var ringtoneSound: String?
    /// A PNG icon (at most 256 KiB).
    public var iconTemplateImageData: Data?
    /// An icon theme name, the desktop's counterpart of the template image.
    public var iconName: String?
    /// URL schemes whose links start calls through this provider, e.g. `["monkeycall"]`.
    public var urlSchemes: [String] = []
    /// The desktop-file id of the app, for notifications.
    public var desktopEntry: String?

    public init(localizedName: String) {
        self.localizedName = localizedName
    }

    /// A configuration named after the running program.
    public convenience init() {
        self.init(localizedName: ProcessInfo.processInfo.processName)
    }

    /// The `RegisterProvider` configuration dictionary.
    var dbusValue: DBusValue { .vardict(entries) }

    var entries: [String: DBusValue] {
        var entries: [String: DBusValue] = [
            Telephony1.Key.name: .string(localizedName),
            Telephony1.Key.maximumCallGroups: .uint32(UInt32(clamping: maximumCallGroups)),
            Telephony1.Key.maximumCallsPerCallGroup: .uint32(UInt32(clamping: maximumCallsPerCallGroup)),
            Telephony1.Key.supportsVideo: .bool(supportsVideo),
            Telephony1.Key.supportedHandleTypes: supportedHandleTypes.map(\.apiName).sorted().dbusValue,
            Telephony1.Key.includesCallsInRecents: .bool(includesCallsInRecents),
            Telephony1.Key.urlSchemes: urlSchemes.dbusValue,
        ]
        if let ringtoneSound { entries[Telephony1.Key.ringtoneSound] = .string(ringtoneSound) }
        if let iconTemplateImageData { entries[Telephony1.Key.iconData] = [UInt8](iconTemplateImageData).dbusValue }
        if let iconName { entries[Telephony1.Key.iconName] = .string(iconName) }
        if let desktopEntry { entries[Telephony1.Key.desktopEntry] = .string(desktopEntry) }
        return entries
    }
}
