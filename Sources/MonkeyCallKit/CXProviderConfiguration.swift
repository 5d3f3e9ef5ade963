import DBus
import FoundationEssentials
import MonkeyCallAPI
import Synchronization

/// How a provider presents itself to the desktop and what it supports
/// (CallKit's `CXProviderConfiguration`, with CallKit's defaults).
public final class CXProviderConfiguration: Sendable {
    /// The settings as the API sends them (`RegisterProvider`'s dictionary), whose defaults are
    /// CallKit's; behind a lock, for an app may set them from any thread. Each property reads
    /// and writes its field, in CallKit's types.
    private let record = Mutex(Telephony1.ProviderConfiguration())

    /// The app's name as the user sees it (1–64 characters).
    public var localizedName: String { get { record[\.name] } set { record[\.name] = newValue } }
    public var maximumCallGroups: Int {
        get { Int(record[\.maximumCallGroups]) }
        set { record[\.maximumCallGroups] = UInt32(clamping: newValue) }
    }
    public var maximumCallsPerCallGroup: Int {
        get { Int(record[\.maximumCallsPerCallGroup]) }
        set { record[\.maximumCallsPerCallGroup] = UInt32(clamping: newValue) }
    }
    public var supportsVideo: Bool { get { record[\.supportsVideo] } set { record[\.supportsVideo] = newValue } }
    /// All three kinds unless the app says otherwise.
    public var supportedHandleTypes: Set<CXHandle.HandleType> {
        get { Set(record[\.supportedHandleTypes].compactMap(CXHandle.HandleType.init(apiName:))) }
        set { record[\.supportedHandleTypes] = newValue.map(\.apiName).sorted() }
    }
    public var includesCallsInRecents: Bool {
        get { record[\.includesCallsInRecents] }
        set { record[\.includesCallsInRecents] = newValue }
    }
    /// A sound file path or an XDG sound name; nil rings with `phone-incoming-call`.
    public var ringtoneSound: String? { get { record[\.ringtoneSound] } set { record[\.ringtoneSound] = newValue } }
    /// A PNG icon (at most 256 KiB).
    public var iconTemplateImageData: Data? {
        get { record[\.iconData].map { Data($0) } }
        set { record[\.iconData] = newValue.map { [UInt8]($0) } }
    }
    /// An icon theme name, the desktop's counterpart of the template image.
    public var iconName: String? { get { record[\.iconName] } set { record[\.iconName] = newValue } }
    /// URL schemes whose links start calls through this provider, e.g. `["monkeycall"]`.
    public var urlSchemes: [String] { get { record[\.urlSchemes] } set { record[\.urlSchemes] = newValue } }
    /// The desktop-file id of the app, for notifications.
    public var desktopEntry: String? { get { record[\.desktopEntry] } set { record[\.desktopEntry] = newValue } }

    public init(localizedName: String) {
        self.localizedName = localizedName
    }

    /// A configuration named after the running program.
    public convenience init() {
        self.init(localizedName: ProcessInfo.processInfo.processName)
    }

    /// The `RegisterProvider` configuration dictionary.
    var dbusValue: DBusValue { .vardict(entries) }

    var entries: [String: DBusValue] { record.value.entries }
}
