import FoundationEssentials
import Localization
import TelephonyCore

/// Calls waiting for one of a few notifications, shared fairly between apps: every app's oldest
/// call, apps in the order their calls arrived, then every app's second call, and so on. So an
/// app with a hundred calls cannot hide another app's call. An app is its account
/// (`Call.appAccount`), not a provider: registering more providers wins no more places.
///
/// The calls chosen, `chosen`, are worked out when a call comes or goes, not each time they are read.
struct FairShare {
    /// How many notifications there are to share.
    let limit: Int
    /// The calls to show, at most `limit`, in the order they arrived when they all fit.
    private(set) var chosen: [UUID] = []
    /// Each app's calls, oldest first.
    private var byApp: [String: [UUID]] = [:]
    /// When each call arrived, as a sequence number.
    private var since: [UUID: UInt64] = [:]
    private var app: [UUID: String] = [:]
    private var sequence: UInt64 = 0

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { since.count }

    /// `call` waits for a place among these (`waiting`: added at the end of its app's calls, unless
    /// there already) or no longer does (removed, if there).
    mutating func update(_ call: Call, waiting: Bool) {
        if waiting { insert(call) } else { remove(call.uuid) }
    }

    private mutating func insert(_ call: Call) {
        guard since[call.uuid] == nil else { return }
        sequence += 1
        since[call.uuid] = sequence
        app[call.uuid] = call.appAccount
        byApp[call.appAccount, default: []].append(call.uuid)
        chosen = choose()
    }

    private mutating func remove(_ uuid: UUID) {
        guard since.removeValue(forKey: uuid) != nil, let account = app.removeValue(forKey: uuid) else { return }
        byApp[account]?.removeAll { $0 == uuid }
        if byApp[account]?.isEmpty == true { byApp[account] = nil }
        chosen = choose()
    }

    private func choose() -> [UUID] {
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

    /// "Monkey: 3, SIP: 1": how many calls of each app are not `chosen`, most first, at most three apps named.
    func leftOut(name: (UUID) -> String?) -> String {
        let shownSet = Set(chosen)
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
