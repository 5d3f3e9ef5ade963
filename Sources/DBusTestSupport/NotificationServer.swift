import DBus
import Foundation

/// A notification server (org.freedesktop.Notifications) for tests: records
/// every Notify and CloseNotification, and presses buttons on request. Serves
/// KDE Plasma's `Inhibited` property (its Do Not Disturb).
public final class NotificationServer: @unchecked Sendable {
    public struct Notification: Sendable {
        public let id: UInt32
        public let appName: String
        public let replacesID: UInt32
        public let icon: String
        public let summary: String
        public let body: String
        /// Action ids and labels, as sent: [id, label, id, label, ...].
        public let actions: [String]
        public let hints: [String: DBusValue]
        public let timeout: Int32
        /// When the server received it, for latency measurements.
        public let receivedAt: ContinuousClock.Instant
    }

    public static let name = "org.freedesktop.Notifications"
    public static let path: ObjectPath = "/org/freedesktop/Notifications"

    public let notified = EventBuffer<Notification>()
    public let closed = EventBuffer<UInt32>()
    public let connection: Connection
    let objects: ObjectServer
    private var nextID: UInt32 = 1
    private let capabilities: [String]
    /// What GetServerInformation answers as the server's name ("dunst", "Xfce Notify Daemon", ...).
    private let serverName: String
    /// What GetServerInformation answers as its version ("43.9": GNOME Shell before 46 draws no app name).
    private let serverVersion: String
    // On the connection's queue.
    private var inhibited: Bool
    private let hangs: Bool
    /// The Notify calls a hung server holds (a call released unanswered gets an error reply).
    private var unanswered: [MethodCall] = []

    /// `hangs`: Notify is never answered (a hung server); it is still recorded.
    public init(address: String, capabilities: [String] = ["actions", "body", "body-markup", "sound", "persistence"],
                inhibited: Bool = false, serverName: String = "test", serverVersion: String = "1", hangs: Bool = false) async throws {
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        self.capabilities = capabilities
        self.serverName = serverName
        self.serverVersion = serverVersion
        self.inhibited = inhibited
        self.hangs = hangs
        try objects.export(Self.path, [interface()])
        guard try await connection.requestName(Self.name) == .primaryOwner else { throw TestSupportError("notification server name taken") }
    }

    /// Presses a button: the server's ActionInvoked signal.
    public func invoke(_ id: UInt32, _ action: String) throws {
        try connection.emit(path: Self.path, interface: Self.name, member: "ActionInvoked", [.uint32(id), .string(action)])
    }

    /// The user closes a notification (× or a click): NotificationClosed with reason 2.
    public func dismiss(_ id: UInt32) throws {
        try connection.emit(path: Self.path, interface: Self.name, member: "NotificationClosed", [.uint32(id), .uint32(2)])
    }

    /// The notification expired at the server: NotificationClosed with reason 1.
    public func expire(_ id: UInt32) throws {
        try connection.emit(path: Self.path, interface: Self.name, member: "NotificationClosed", [.uint32(id), .uint32(1)])
    }

    /// Waits for a link's question ("Call HANDLE with APP?", with a `call` button) and presses Call.
    @discardableResult
    public func confirmLink(timeout: Duration = .seconds(10)) async throws -> Notification {
        guard let question = await notified.next(timeout: timeout, where: { $0.actions.contains("call") && $0.summary.hasPrefix("Call ") }) else {
            throw TestSupportError("no link confirmation was shown")
        }
        try invoke(question.id, "call")
        return question
    }

    /// Do Not Disturb turned on or off at the server, announced with PropertiesChanged.
    public func setInhibited(_ value: Bool) {
        connection.onQueueSync {
            inhibited = value
            objects.exportedObject(at: Self.path)?.propertiesChanged(["Inhibited"], on: Self.name)
        }
    }

    /// The server goes away, as if it crashed.
    public func stop() { connection.close() }

    /// Released: it leaves the bus rather than stay there answering for nobody.
    deinit { connection.close() }

    private func interface() -> Interface {
        Interface(Self.name) {
            Method("GetCapabilities", out: ["capabilities": "as"]) { [weak self] _ in
                guard let self else { throw DBusError.standInReleased }
                return .values([capabilities.dbusValue])
            }
            Method("GetServerInformation", out: ["name": "s", "vendor": "s", "version": "s", "spec_version": "s"]) { [weak self] _ in
                .values([.string(self?.serverName ?? "test"), .string("MonkeyCall"), .string(self?.serverVersion ?? "1"), .string("1.2")])
            }
            Method("Notify", in: ["app_name": "s", "replaces_id": "u", "app_icon": "s", "summary": "s", "body": "s",
                                  "actions": "as", "hints": "a{sv}", "expire_timeout": "i"], out: ["id": "u"]) { [weak self] call in
                guard let self else { throw DBusError.standInReleased }
                let (appName, replaces, icon, summary, body, actions, hints, timeout) =
                    try call.decode(String.self, UInt32.self, String.self, String.self, String.self, [String].self, [String: DBusValue].self, Int32.self)
                let id = replaces != 0 ? replaces : nextID
                if replaces == 0 { nextID += 1 }
                notified.append(Notification(id: id, appName: appName, replacesID: replaces, icon: icon, summary: summary, body: body,
                                             actions: actions, hints: hints, timeout: timeout, receivedAt: .now))
                guard !hangs else {
                    unanswered.append(call)
                    return .later
                }
                return .values([.uint32(id)])
            }
            Method("CloseNotification", in: ["id": "u"]) { [weak self] call in
                guard let self else { throw DBusError.standInReleased }
                let id = try call.decode(UInt32.self)
                closed.append(id)
                try? connection.emit(path: Self.path, interface: Self.name, member: "NotificationClosed", [.uint32(id), .uint32(3)])
                return .empty
            }
            Property("Inhibited", "b") { [weak self] in .bool(self?.inhibited ?? false) }
            Signal("NotificationClosed", ["id": "u", "reason": "u"])
            Signal("ActionInvoked", ["id": "u", "action_key": "s"])
        }
    }
}
