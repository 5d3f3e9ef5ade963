/// A desktop notification as the freedesktop Notifications spec knows it,
/// independent of what it is about.
public struct DesktopNotification: Sendable, Equatable {
    public enum Urgency: UInt8, Sendable { case low = 0, normal = 1, critical = 2 }

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
    /// Plain text; escaped for servers that read markup.
    public var body: String
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
    public var desktopEntry: String = ""
    /// False: the notification never expires.
    public var expires: Bool = true

    public init(key: String, appName: String, summary: String, body: String) {
        self.key = key
        self.appName = appName
        self.summary = summary
        self.body = body
    }
}

/// Shows and withdraws desktop notifications. Implementations may work on
/// their own thread; `onAction` may be called from any thread.
public protocol Notifier: AnyObject, Sendable {
    /// Shows `notification`, replacing the one posted under the same key.
    func post(_ notification: DesktopNotification, onAction: @escaping @Sendable (String) -> Void)
    /// Closes the notification posted under `key`, if any.
    func withdraw(_ key: String)
    /// Forgets every notification: the server that showed them went away.
    func reset()
}
