import DBus
import DesktopNotifications
import FoundationEssentials
import Localization
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
        notifier.post(notification) { [weak self] happened in
            // From the notifier's thread back to the actor.
            TelephonyActor.enter {
                guard let self else { return }
                // Closed at the server: nothing is on screen under the key any more.
                if !happened.isAction, self.posted[key]?.owner == ownerID { self.posted[key] = nil }
                onEvent(happened)
            }
        }
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

/// Calls waiting for one of a few notifications, shared fairly between apps: every app's oldest
/// call, apps in the order their calls arrived, then every app's second call, and so on. So an
/// app with a hundred calls cannot hide another app's call. An app is its account
/// (`Call.appAccount`), not a provider: registering more providers wins no more places.
struct FairShare {
    /// Each app's calls, oldest first.
    private(set) var byApp: [String: [UUID]] = [:]
    /// When each call arrived, as a sequence number.
    private var since: [UUID: UInt64] = [:]
    private var app: [UUID: String] = [:]
    private var sequence: UInt64 = 0

    var count: Int { since.count }

    func contains(_ uuid: UUID) -> Bool { since[uuid] != nil }

    /// Adds a call (at the end of its app's calls); false when it was there already.
    @discardableResult
    mutating func insert(_ call: Call) -> Bool {
        guard since[call.uuid] == nil else { return false }
        sequence += 1
        since[call.uuid] = sequence
        app[call.uuid] = call.appAccount
        byApp[call.appAccount, default: []].append(call.uuid)
        return true
    }

    /// Removes a call; false when it was not there.
    @discardableResult
    mutating func remove(_ uuid: UUID) -> Bool {
        guard since.removeValue(forKey: uuid) != nil, let account = app.removeValue(forKey: uuid) else { return false }
        byApp[account]?.removeAll { $0 == uuid }
        if byApp[account]?.isEmpty == true { byApp[account] = nil }
        return true
    }

    /// The calls to show, at most `limit`, in the order they arrived when they all fit.
    func choose(limit: Int) -> [UUID] {
        guard count > limit else { return byApp.values.flatMap { $0 }.sorted { since[$0]! < since[$1]! } }
        // Only the `limit` apps with the oldest calls can matter: pick them without sorting them all.
        var apps: [[UUID]] = []
        for calls in byApp.values {
            apps.append(calls)
            apps.sort { since[$0[0]]! < since[$1[0]]! }
            if apps.count > limit { apps.removeLast() }
        }
        var chosen: [UUID] = []
        var round = 0
        while chosen.count < limit {
            for calls in apps where round < calls.count && chosen.count < limit { chosen.append(calls[round]) }
            round += 1
        }
        return chosen
    }

    /// "Monkey: 3, SIP: 1": how many calls of each app are not among `shown`, most first, at most three apps named.
    func leftOut(shown: [UUID], name: (UUID) -> String?) -> String {
        let shownSet = Set(shown)
        var perApp: [(name: String, count: Int)] = []
        for calls in byApp.values {
            let waiting = calls.count { !shownSet.contains($0) }
            if waiting > 0, let first = calls.first, let appName = name(first) { perApp.append((appName, waiting)) }
        }
        perApp.sort { ($0.count, $1.name) > ($1.count, $0.name) }
        // TRANSLATORS: an app's name and how many of its calls are not shown, as in "Monkey: 3".
        let named = perApp.prefix(3).map { tr("%1$s: %2$s", $0.name, String($0.count)) }
        // TRANSLATORS: the separator between the apps in "Monkey: 3, SIP: 1".
        var text = named.joined(separator: tr(", "))
        if perApp.count > 3 { text += trn(" and %d more app", " and %d more apps", perApp.count - 3) }
        return text
    }
}
