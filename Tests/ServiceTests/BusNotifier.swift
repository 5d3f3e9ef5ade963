import DBus
import DBusTestSupport
import DesktopNotifications
import Foundation

/// A `Notifier` that speaks org.freedesktop.Notifications over its own connection to one bus, for
/// the service running inside the test process: libnotify's proxy is one per process, bound to one
/// session bus, so tests that run side by side on their own buses cannot share it. It sends what
/// `LibnotifyNotifier` sends of the notifications a test looks at (texts, actions, the hints that
/// matter, the timeout) and reports ActionInvoked and NotificationClosed (reasons 1 and 2) back.
final class BusNotifier: Notifier, @unchecked Sendable {
    private let connection: Connection
    private let lock = NSLock()
    /// The server's id of each key's notification, and who hears each id.
    private var ids: [String: UInt32] = [:]
    private var handlers: [UInt32: @Sendable (NotificationEvent) -> Void] = [:]
    /// Events for an id whose Notify reply has not been handled yet (the server's signal may overtake it here).
    private var early: [UInt32: [NotificationEvent]] = [:]
    /// Posts and withdrawals go out in order, one after the other.
    private var last: Task<Void, Never>?
    private var subscriptions: [Subscription] = []

    init(address: String) async throws {
        connection = try Connection(address: address)
        let actions = MatchRule(interface: NotificationServer.name, member: "ActionInvoked")
        let closed = MatchRule(interface: NotificationServer.name, member: "NotificationClosed")
        subscriptions.append(try await connection.subscribe(actions) { [weak self] message in
            guard let arguments = try? message.arguments(), case .uint32(let id)? = arguments.first, case .string(let action)? = arguments.last else { return }
            self?.deliver(.action(action), to: id, closing: false)
        })
        subscriptions.append(try await connection.subscribe(closed) { [weak self] message in
            guard let arguments = try? message.arguments(), case .uint32(let id)? = arguments.first, case .uint32(let reason)? = arguments.last,
                  reason == 1 || reason == 2 else { return }
            self?.deliver(reason == 1 ? .expired : .dismissed, to: id, closing: true)
        })
    }

    private func deliver(_ event: NotificationEvent, to id: UInt32, closing: Bool) {
        let handler: (@Sendable (NotificationEvent) -> Void)? = lock.withLock {
            guard let handler = handlers[id] else {
                if !ids.values.contains(id) { early[id, default: []].append(event) }
                return nil
            }
            if closing {
                if let key = ids.first(where: { $0.value == id })?.key { ids[key] = nil }
                handlers[id] = nil
            }
            return handler
        }
        handler?(event)
    }

    private func inOrder(_ work: @escaping @Sendable () async -> Void) {
        lock.withLock {
            let previous = last
            last = Task {
                await previous?.value
                await work()
            }
        }
    }

    func post(_ notification: DesktopNotification, onEvent: @escaping @Sendable (NotificationEvent) -> Void) {
        inOrder { [self] in
            var hints: [String: DBusValue] = ["urgency": .byte(notification.urgency.rawValue)]
            if !notification.category.isEmpty { hints["category"] = .string(notification.category) }
            if notification.resident { hints["resident"] = .bool(true) }
            if notification.suppressesSound { hints["suppress-sound"] = .bool(true) }
            if !notification.desktopEntry.isEmpty { hints["desktop-entry"] = .string(notification.desktopEntry) }
            let timeout: Int32 = switch notification.expiry {
            case .never: 0
            case .serverDefault: -1
            case .seconds(let seconds): Int32(seconds * 1000)
            }
            let replaces = lock.withLock { ids[notification.key] ?? 0 }
            let actions = notification.actions.flatMap { [$0.id, $0.label] }
            guard let reply = try? await connection.call(destination: NotificationServer.name, path: NotificationServer.path, interface: NotificationServer.name,
                                                         member: "Notify", [.string(notification.appName), .uint32(replaces), .string(notification.iconName),
                                                                            .string(notification.summary), .string(notification.body), actions.dbusValue,
                                                                            .vardict(hints), .int32(timeout)]),
                  case .uint32(let id)? = reply.first else { return }
            let early = lock.withLock {
                ids[notification.key] = id
                handlers[id] = onEvent
                return self.early.removeValue(forKey: id) ?? []
            }
            for event in early { deliver(event, to: id, closing: event == .expired || event == .dismissed) }
        }
    }

    func withdraw(_ key: String) {
        inOrder { [self] in
            guard let id = lock.withLock({ () -> UInt32? in
                let id = ids.removeValue(forKey: key)
                if let id { handlers[id] = nil }
                return id
            }) else { return }
            _ = try? await connection.call(destination: NotificationServer.name, path: NotificationServer.path, interface: NotificationServer.name,
                                           member: "CloseNotification", [.uint32(id)])
        }
    }

    func serverVanished() {
        lock.withLock {
            ids = [:]
            handlers = [:]
        }
    }

    func serverAppeared() {}

    deinit { connection.close() }
}
