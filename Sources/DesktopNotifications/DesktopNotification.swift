/// A desktop notification as the freedesktop Notifications spec knows it,
/// independent of what it is about.
public struct DesktopNotification: Sendable, Equatable {
    public enum Urgency: UInt8, Sendable { case low = 0, normal = 1, critical = 2 }

    public enum Expiry: Sendable, Equatable {
        case never
        /// The server's own timeout (`-1`).
        case serverDefault
        case seconds(Int)
    }

    public struct Action: Sendable, Equatable {
        public var id: String
        public var label: String
        public init(_ id: String, _ label: String) {
            self.id = id
            self.label = label
        }
    }

    /// Identifies the notification to the poster: posting the same key again replaces it in place.
    public var key: String
    public var appName: String
    public var summary: String
    /// The body: plain text, one line per fact. The notifier cleans each line on its own
    /// (`ScreenText.clean`: a line break inside one, say in a caller's name, cannot fake a line of
    /// its own) and escapes them for servers that read markup.
    public var lines: [String]
    /// The lines, one under the other; set, split at its line breaks.
    public var body: String {
        get { lines.joined(separator: "\n") }
        set { lines = Self.lines(of: newValue) }
    }
    /// The body for servers that draw it as one line (GNOME Shell 46 and later, which show line
    /// breaks as spaces): written for one line, naming no app (the header does). Nil: the body's
    /// lines joined with " · ".
    public var oneLineBody: String?
    /// The summary where the server's header names another app than this one: the card's
    /// `desktop-entry` is the notifier's fallback (the Phone app), not the app's own. Nil: `summary`.
    public var summaryNamingApp: String?
    public var iconName: String = ""
    /// A PNG image sent as the `image-data` hint (an app's own icon).
    public var imagePNG: [UInt8] = []
    public var actions: [Action] = []
    public var category: String = ""
    public var urgency: Urgency = .normal
    /// Stays after an action is invoked (the spec's `resident` hint).
    public var resident: Bool = false
    public var soundFile: String = ""
    public var soundName: String = ""
    /// The app's own desktop file id; when empty, the notifier sends its fallback (the Phone app).
    public var desktopEntry: String = ""
    /// When the server takes it away by itself.
    public var expiry: Expiry = .serverDefault
    /// Posted again without its sound (the spec's `suppress-sound` hint).
    public var suppressesSound: Bool = false
    /// The summary or body already names the app: the notifier adds it nowhere, even where the
    /// server does not draw `appName`.
    public var namesAppInText: Bool = false

    /// `body`'s lines are its line breaks.
    public init(key: String, appName: String, summary: String, body: String) {
        self.init(key: key, appName: appName, summary: summary, lines: Self.lines(of: body))
    }

    public init(key: String, appName: String, summary: String, lines: [String]) {
        self.key = key
        self.appName = appName
        self.summary = summary
        self.lines = lines
    }

    private static func lines(of body: String) -> [String] {
        // At each "\n" scalar, as `ScreenText.cleanKeepingLineBreaks` keeps them ("\r\n" is one Character).
        body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String(Substring($0)) }
    }
}

/// What the user (or the server) did with a notification.
public enum NotificationEvent: Sendable, Equatable {
    /// A button (or the body, `default`) was pressed.
    case action(String)
    /// The user closed it (the spec's reason 2), not after pressing one of its buttons.
    case dismissed
    /// The server took it away when it expired (reason 1).
    case expired
}

/// Shows and withdraws desktop notifications. Implementations may work on
/// their own thread; `onEvent` may be called from any thread.
public protocol Notifier: AnyObject, Sendable {
    /// Shows `notification`, replacing the one posted under the same key. `onEvent` hears its
    /// buttons, and its closing when the user or the server closed it (not when withdrawn).
    func post(_ notification: DesktopNotification, onEvent: @escaping @Sendable (NotificationEvent) -> Void)
    /// Closes the notification posted under `key`, if any.
    func withdraw(_ key: String)
    /// The server that showed the notifications went away: forgets them and what it knew of it.
    func serverVanished()
    /// A server took the name: what is known of the server is asked afresh. Notifications it has
    /// shown already stay known, so that posting them again replaces them in place.
    func serverAppeared()
}
