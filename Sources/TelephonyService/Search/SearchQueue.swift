import DBus
import Dispatch
import Synchronization

/// Where the system search's searches wait and run (`PeopleFinder`): one at a time, off the
/// service's queue, in turns. Each process waiting gets one search per round, so a process that
/// sends thousands makes another's wait for at most one search of each process ahead of it, never
/// for its backlog (issue 53: 2,000 searches of one process held GNOME Shell's for 244 s). A search
/// that a newer one of the same connection replaces (GNOME Shell and KRunner search again at each
/// key and drop the answer to the last one) is dropped while it waits, and answered empty when it
/// was already running. What waits is bounded per process and in all: past that, LimitsExceeded.
final class SearchQueue: Sendable {
    /// Who asked, as the queue tells searches apart.
    struct Requester: Sendable {
        /// Whose turn it is: the caller's process (`Caller.account`), however many connections it uses.
        var account: String
        /// What a newer search with the same key replaces: the connection and the desktop search it
        /// asks (GNOME Shell's, KRunner's). nil: none replaces it (`AddressBook.Search`, the service's own).
        var replacing: String?

        /// A method call's caller; `replacing`: the name of the search it asks for, when a newer one replaces it.
        init(_ call: MethodCall, replacing search: String? = nil) {
            account = call.caller?.account ?? "connection \(call.sender)"
            replacing = search.map { "\(call.sender) \($0)" }
        }

        init(account: String) {
            self.account = account
            replacing = nil
        }
    }

    /// Searches waiting, of one process and in all. GNOME Shell and KRunner have one search each
    /// waiting at most (a newer one replaces it); the Phone app waits for each answer. The total
    /// bounds what processes queue beyond their first search: a process with none waiting is always
    /// let in (so that no number of others shuts GNOME Shell out), and waits for one search of each
    /// process ahead of it, each bounded (`SearchQuery.maximumWords`).
    static let maximumWaitingPerAccount = 16
    static let maximumWaiting = 256

    private struct Search {
        let ticket: UInt64
        let replacing: String?
        /// Runs it; its argument tells, when it is done, whether a newer search replaced it meanwhile.
        let run: @Sendable (_ isReplaced: () -> Bool) -> Void
        /// It was replaced before it ran.
        let dropped: @Sendable () -> Void
    }

    private struct State {
        /// By account, oldest first.
        var waiting: [String: [Search]] = [:]
        /// The accounts with searches waiting, whose turn is next first.
        var turns: [String] = []
        var count = 0
        var isRunning = false
        /// The newest search of each `Requester.replacing` that waits or runs.
        var newest: [String: UInt64] = [:]
        var nextTicket: UInt64 = 0

        /// The search whose turn it is, or nil (and not running) when none waits.
        mutating func next() -> Search? {
            guard !turns.isEmpty else {
                isRunning = false
                return nil
            }
            let account = turns.removeFirst()
            let search = waiting[account]!.removeFirst()
            count -= 1
            if waiting[account]!.isEmpty { waiting[account] = nil } else { turns.append(account) }
            return search
        }
    }

    private let queue: DispatchQueue
    private let state = Mutex(State())

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Queues a search: `run` runs on the queue in `requester`'s turn and is told, when done,
    /// whether a newer one replaced it meanwhile; `dropped` is called instead when one replaced it
    /// before it ran. LimitsExceeded when the requester's process or the queue has as many waiting as
    /// it may.
    func submit(_ requester: Requester, run: @escaping @Sendable (_ isReplaced: () -> Bool) -> Void,
                dropped: @escaping @Sendable () -> Void) throws(DBusError) {
        let account = requester.account
        let outcome = state.withLock { state -> Result<(replaced: Search?, start: Bool), DBusError> in
            let search = Search(ticket: state.nextTicket, replacing: requester.replacing, run: run, dropped: dropped)
            state.nextTicket += 1
            // The search it replaces gives it its place, and its turn.
            if let key = requester.replacing, let index = state.waiting[account]?.firstIndex(where: { $0.replacing == key }) {
                let replaced = state.waiting[account]![index]
                state.waiting[account]![index] = search
                state.newest[key] = search.ticket
                return .success((replaced, false))
            }
            let mine = state.waiting[account]?.count ?? 0
            guard mine < Self.maximumWaitingPerAccount else {
                return .failure(.limitsExceeded("this process has \(mine) searches waiting; at most \(Self.maximumWaitingPerAccount)"))
            }
            guard mine == 0 || state.count < Self.maximumWaiting else {
                return .failure(.limitsExceeded("\(state.count) searches are waiting, the most the service keeps; try again"))
            }
            if mine == 0 { state.turns.append(account) }
            state.waiting[account, default: []].append(search)
            state.count += 1
            // One running with the same key is answered empty when it is done.
            if let key = requester.replacing { state.newest[key] = search.ticket }
            let start = !state.isRunning
            state.isRunning = true
            return .success((nil, start))
        }
        let (replaced, start) = try outcome.get()
        replaced?.dropped()
        if start { queue.async { self.drain() } }
    }

    /// Runs the searches in turn until none waits.
    private func drain() {
        while let search = state.withLock({ $0.next() }) {
            search.run { state.withLock { state in search.replacing.map { state.newest[$0] != search.ticket } ?? false } }
            guard let key = search.replacing else { continue }
            state.withLock { state in
                if state.newest[key] == search.ticket { state.newest[key] = nil }
            }
        }
    }
}
