import DBus
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
            "Name": .string(localizedName),
            "MaximumCallGroups": .uint32(UInt32(clamping: maximumCallGroups)),
            "MaximumCallsPerCallGroup": .uint32(UInt32(clamping: maximumCallsPerCallGroup)),
            "SupportsVideo": .bool(supportsVideo),
            "SupportedHandleTypes": supportedHandleTypes.map(\.apiName).sorted().dbusValue,
            "IncludesCallsInRecents": .bool(includesCallsInRecents),
            "URLSchemes": urlSchemes.dbusValue,
        ]
        if let ringtoneSound { entries["RingtoneSound"] = .string(ringtoneSound) }
        if let iconTemplateImageData { entries["IconData"] = [UInt8](iconTemplateImageData).dbusValue }
        if let iconName { entries["IconName"] = .string(iconName) }
        if let desktopEntry { entries["DesktopEntry"] = .string(desktopEntry) }
        return entries
    }
}
