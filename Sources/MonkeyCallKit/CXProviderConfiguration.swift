import DBus
import MonkeyCallAPI
import Foundation
import Synchronization

/// How a provider presents itself to the desktop and what it supports
/// (CallKit's `CXProviderConfiguration`, with CallKit's defaults).
public final class CXProviderConfiguration: Sendable {
    /// The settings as CallKit names them, behind a lock: an app may set them from any thread.
    private struct Settings {
        var localizedName: String
        var maximumCallGroups = 2
        var maximumCallsPerCallGroup = 5
        var supportsVideo = false
        var supportedHandleTypes = Set(CXHandle.HandleType.allCases)
        var includesCallsInRecents = true
        var ringtoneSound: String?
        var iconTemplateImageData: Data?
        var iconName: String?
        var urlSchemes: [String] = []
        var desktopEntry: String?
    }

    private let settings: Mutex<Settings>

    private subscript<Value: Sendable>(_ setting: WritableKeyPath<Settings, Value>) -> Value {
        get { settings.withLock { $0[keyPath: setting] } }
        set { settings.withLock { $0[keyPath: setting] = newValue } }
    }

    /// The app's name as the user sees it (1–64 characters).
    public var localizedName: String { get { self[\.localizedName] } set { self[\.localizedName] = newValue } }
    public var maximumCallGroups: Int { get { self[\.maximumCallGroups] } set { self[\.maximumCallGroups] = newValue } }
    public var maximumCallsPerCallGroup: Int {
        get { self[\.maximumCallsPerCallGroup] }
        set { self[\.maximumCallsPerCallGroup] = newValue }
    }
    public var supportsVideo: Bool { get { self[\.supportsVideo] } set { self[\.supportsVideo] = newValue } }
    /// All three kinds unless the app says otherwise.
    public var supportedHandleTypes: Set<CXHandle.HandleType> {
        get { self[\.supportedHandleTypes] }
        set { self[\.supportedHandleTypes] = newValue }
    }
    public var includesCallsInRecents: Bool {
        get { self[\.includesCallsInRecents] }
        set { self[\.includesCallsInRecents] = newValue }
    }
    /// A sound file path or an XDG sound name; nil rings with `phone-incoming-call`.
    public var ringtoneSound: String? { get { self[\.ringtoneSound] } set { self[\.ringtoneSound] = newValue } }
    /// A PNG icon (at most 256 KiB).
    public var iconTemplateImageData: Data? {
        get { self[\.iconTemplateImageData] }
        set { self[\.iconTemplateImageData] = newValue }
    }
    /// An icon theme name, the desktop's counterpart of the template image.
    public var iconName: String? { get { self[\.iconName] } set { self[\.iconName] = newValue } }
    /// URL schemes whose links start calls through this provider, e.g. `["monkeycall"]`.
    public var urlSchemes: [String] { get { self[\.urlSchemes] } set { self[\.urlSchemes] = newValue } }
    /// The desktop-file id of the app, for notifications.
    public var desktopEntry: String? { get { self[\.desktopEntry] } set { self[\.desktopEntry] = newValue } }

    public init(localizedName: String) {
        settings = Mutex(Settings(localizedName: localizedName))
    }

    /// A configuration named after the running program.
    public convenience init() {
        self.init(localizedName: ProcessInfo.processInfo.processName)
    }

    /// The `RegisterProvider` configuration dictionary.
    var dbusValue: DBusValue { .vardict(entries) }

    var entries: [String: DBusValue] {
        let settings = settings.withLock { $0 }
        var record = Telephony1.ProviderConfiguration()
        record.name = settings.localizedName
        record.maximumCallGroups = UInt32(clamping: settings.maximumCallGroups)
        record.maximumCallsPerCallGroup = UInt32(clamping: settings.maximumCallsPerCallGroup)
        record.supportsVideo = settings.supportsVideo
        record.supportedHandleTypes = settings.supportedHandleTypes.map(\.apiName).sorted()
        record.includesCallsInRecents = settings.includesCallsInRecents
        record.urlSchemes = settings.urlSchemes
        record.ringtoneSound = settings.ringtoneSound
        record.iconData = settings.iconTemplateImageData.map { [UInt8]($0) }
        record.iconName = settings.iconName
        record.desktopEntry = settings.desktopEntry
        return record.entries
    }
}
