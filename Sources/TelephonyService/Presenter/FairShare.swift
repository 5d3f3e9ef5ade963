import FoundationEssentials
import Localization
import TelephonyCore

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
