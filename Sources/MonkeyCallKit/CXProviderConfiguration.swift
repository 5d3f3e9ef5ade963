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
        var record = Telephony1.ProviderConfiguration()
        record.name = localizedName
        record.maximumCallGroups = UInt32(clamping: maximumCallGroups)
        record.maximumCallsPerCallGroup = UInt32(clamping: maximumCallsPerCallGroup)
        record.supportsVideo = supportsVideo
        record.supportedHandleTypes = supportedHandleTypes.map(\.apiName).sorted()
        record.includesCallsInRecents = includesCallsInRecents
        record.urlSchemes = urlSchemes
        record.ringtoneSound = ringtoneSound
        record.iconData = iconTemplateImageData.map { [UInt8]($0) }
        record.iconName = iconName
        record.desktopEntry = desktopEntry
        return record.entries
    }
}
