import DBus
import DesktopNotifications
import FoundationEssentials
import OrderedCollections
import TelephonyCore

/// The service's notifications on screen, shared by everything that posts them (the calls'
/// notifications, link confirmations, Do Not Disturb's): each is posted under a key, and the key
/// belongs to whoever posted it; a withdrawal of a key one does not own closes nothing. Posting
/// again under a key replaces the notification in place (same id at the server).
///
/// The notifier's events come back to the actor.
@TelephonyActor
final class NotificationBoard {
    private let notifier: Notifier
    /// What is on screen, by key, and who posted it: an unchanged notification is not sent again.
    private var posted: [String: (notification: DesktopNotification, owner: ObjectIdentifier)] = [:]
    /// Keys of the notifications posted that the server expires ("Call ended", missed calls), oldest
    /// first. The server's NotificationClosed takes them off `posted`; with no server, or one that
    /// never says, nothing would, and every call left one behind (5 KB a call in a soak). Past
    /// `transientKept`, the oldest are forgotten: their notifications expire on screen all the same.
    private var transientKeys: OrderedSet<String> = []
    static let transientKept = 64
    /// Told when a notification server appears, to post again what should be on screen.
    private var reposters: [() -> Void] = []
    /// Whether a notification server owns its name (set by whoever follows it).
    var hasServer = false

    init(notifier: Notifier) {
        self.notifier = notifier
    }

    /// Shows `notification` for `owner`, replacing whatever is posted under its key, unless
    /// exactly this is on screen already. `onEvent` runs on the actor.
    func post(_ notification: DesktopNotification, by owner: AnyObject, onEvent: @escaping @Sendable @TelephonyActor (NotificationEvent) -> Void) {
        let ownerID = ObjectIdentifier(owner)
        if let current = posted[notification.key], current.owner == ownerID, current.notification == notification { return }
        posted[notification.key] = (notification, ownerID)
        if notification.expiry != .never { rememberTransient(notification.key) }
        let key = notification.key
        // Heard on the notifier's thread, handled on the actor.
        notifier.post(notification, onEvent: TelephonyActor.entering { [weak self] happened in
            guard let self else { return }
            // Closed at the server: nothing is on screen under the key any more.
            if !happened.isAction, posted[key]?.owner == ownerID { posted[key] = nil }
            onEvent(happened)
        })
    }

    /// A key posted again moves to the end.
    private func rememberTransient(_ key: String) {
        transientKeys.remove(key)
        transientKeys.append(key)
        guard transientKeys.count > Self.transientKept else { return }
        let oldest = transientKeys.removeFirst()
        // Unless the key has since been posted again as one that stays until withdrawn.
        if posted[oldest]?.notification.expiry != .never { posted[oldest] = nil }
    }

    /// How many notifications the board remembers (for tests: bounded whatever the server does).
    var postedCount: Int { posted.count }

    /// Closes the notification under `key` if `owner` posted it; another owner's stays.
    func withdraw(_ key: String, by owner: AnyObject) {
        guard posted[key]?.owner == ObjectIdentifier(owner) else { return }
        posted[key] = nil
        notifier.withdraw(key)
    }

    /// Whether `owner` has a notification on screen under `key`.
    func shows(_ key: String, by owner: AnyObject) -> Bool { posted[key]?.owner == ObjectIdentifier(owner) }

    /// The one notification that counts the calls left without their own ("3 more incoming calls",
    /// by app), or none when `count` is 0.
    func postCount(_ count: Int, summary: String, body: String, key: String, category: String, by owner: AnyObject) {
        guard count > 0 else { return withdraw(key, by: owner) }
        var notification = DesktopNotification(key: key, appName: "MonkeyCall", summary: summary, body: body)
        notification.category = category
        notification.expiry = .never
        post(notification, by: owner) { _ in }
    }

    /// `repost` runs when a notification server appears: what should be on screen is posted again.
    func onServerAppeared(_ repost: @escaping () -> Void) { reposters.append(repost) }

    /// The notification server went away: what it showed is gone with it.
    func serverVanished() {
        hasServer = false
        posted = [:]
        transientKeys = []
        notifier.serverVanished()
    }

    /// A notification server appeared: every poster shows again what it should.
    func serverAppeared() {
        hasServer = true
        posted = [:]
        transientKeys = []
        notifier.serverAppeared()
        for repost in reposters { repost() }
    }
}

extension NotificationEvent {
    var isAction: Bool { if case .action = self { true } else { false } }
}
