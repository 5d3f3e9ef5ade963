import DBus
import DesktopNotifications
import FoundationEssentials
import MonkeyCallAPI
import QueueExecutor

/// The notification server (org.freedesktop.Notifications): ringing resumes
/// when one appears, and its `Inhibited` property (KDE Plasma's Do Not
/// Disturb) is followed, across restarts and changes of owner. GNOME's Do
/// Not Disturb arrives through a `DesktopDoNotDisturb` from the daemon.
///
/// Owns who owns the notification server and the watches that follow it.
@TelephonyActor
final class DesktopDoNotDisturbSources {
    static let notificationServer = "org.freedesktop.Notifications"
    static let notificationServerPath: ObjectPath = "/org/freedesktop/Notifications"

    private let context: ServiceContext
    /// The notifications on screen: posted again when a notification server appears.
    private let board: NotificationBoard?
    /// Who owns org.freedesktop.Notifications, and the watches that follow it.
    private var notificationServerOwner: String?
    private var notificationServerWatches: [Subscription] = []

    init(context: ServiceContext, board: NotificationBoard?) {
        self.context = context
        self.board = board
    }

    private var connection: Connection { context.connection }

    /// After `Connection.followNameOwners()`, whose match rule brings the owner changes.
    func followNotificationServer() async throws {
        let name = Self.notificationServer
        let ownerWatch = try await connection.watchNameOwnerChanges(TelephonyActor.onQueue { [weak self] change in
            guard let self, change.name == name else { return }
            // A server that replaced another (old and new owner both set) is a vanishing, then an appearing.
            if !change.oldOwner.isEmpty { board?.serverVanished() }
            if !change.newOwner.isEmpty { board?.serverAppeared() }
            notificationServerAppeared(change.newOwner.isEmpty ? nil : change.newOwner)
        })
        var watches = [ownerWatch]
        // Whether there is a server to ask through (links ask first).
        let owner = try await connection.nameOwner(name)
        if owner != nil, board?.hasServer == false { board?.hasServer = true }
        if context.options.followsDesktopDoNotDisturb {
            // The bus matches the well-known sender against whoever owns it now.
            let changes = MatchRule(sender: name, path: Self.notificationServerPath, interface: "org.freedesktop.DBus.Properties",
                                    member: "PropertiesChanged", arg0: name)
            watches.append(try await connection.subscribe(changes, handler: TelephonyActor.onQueue { [weak self] message in
                guard let self, message.sender == notificationServerOwner, let arguments = try? message.arguments(), arguments.count >= 2,
                      case .bool(let inhibited)? = arguments[1].vardict?["Inhibited"] else { return }
                context.changeDoNotDisturb { context.screening.notificationServerInhibited = inhibited }
            }))
            if notificationServerOwner == nil { notificationServerAppeared(owner) }
        }
        notificationServerWatches = watches
    }

    /// A server took the name (or nobody has it): its `Inhibited` is read afresh.
    private func notificationServerAppeared(_ owner: String?) {
        guard context.options.followsDesktopDoNotDisturb else { return }
        notificationServerOwner = owner
        context.changeDoNotDisturb { context.screening.notificationServerInhibited = false }
        guard let owner else { return }
        Task(executorPreference: SerialTaskExecutor.shared) { [weak self, connection] in
            // A server without the property (most but KDE's) has no Do Not Disturb to follow.
            let reply = try? await connection.call(destination: owner, path: Self.notificationServerPath, interface: "org.freedesktop.DBus.Properties",
                                                   member: "Get", [.string(Self.notificationServer), .string("Inhibited")], timeout: .seconds(5))
            guard case .bool(let inhibited)? = reply?.first?.unwrappedVariant else { return }
            await self?.notificationServer(owner, inhibited: inhibited)
        }
    }

    private func notificationServer(_ owner: String, inhibited: Bool) {
        guard notificationServerOwner == owner else { return }
        context.changeDoNotDisturb { context.screening.notificationServerInhibited = inhibited }
    }

    /// Follows GNOME's Do Not Disturb (or another desktop's switch).
    func follow(_ desktop: DesktopDoNotDisturb) {
        desktop.follow { [weak self] on in
            TelephonyActor.enter { self?.context.changeDoNotDisturb { self?.context.screening.gnomeDoNotDisturb = on } }
        }
    }
}
