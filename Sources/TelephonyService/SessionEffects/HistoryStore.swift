import CallHistory
import DBus
import Dispatch
import FoundationEssentials
import Logging
import PeopleSearch
import TelephonyCore

/// Recents and Favorites as the service sees them. The database is
/// used only through its own executor (`HistoryQueue`); results come back to
/// the actor. What a call needs at once is kept here, in memory, and
/// follows every write: who has called before (silencing unknown callers,
/// screened inside `ReportNewIncomingCall`, and the system's search), favorite
/// names (caller names) and the favorites themselves (search), and the missed
/// count (a property).
@TelephonyActor
final class HistoryStore {
    let database: HistoryQueue
    nonisolated var path: String { database.history.path }
    /// Who has called lately (entries still waiting to be written included).
    private var known = KnownHandles()
    /// Handles of entries handed to the database and not yet written (or given up), by count.
    private var pending: [String: Int] = [:]
    /// Missed calls not yet seen, as the last write found them.
    var missedCount = 0
    /// Favorite names by handle (the first favorite of a handle names it).
    private(set) var favoriteNames: [String: String] = [:]
    /// Every favorite, for search, as it sees them.
    private(set) var favoritePeople: [SearchPerson] = []
    /// Count the changes of `known` and of the favorites: a search's index of each is made again
    /// when its count moved.
    private(set) var recentsVersion: UInt64 = 1
    private(set) var favoritesVersion: UInt64 = 1
    /// Told of each change of the favorites (the address book's search answers IsFavorite).
    var onFavoritesChanged: (@TelephonyActor () -> Void)?
    private let logger: Logger
    /// The last attempt to record an ended call failed (logged once until one succeeds).
    private var recordingFails = false

    /// `queue`: the actor's queue, where results are delivered.
    init(_ history: CallHistory, queue: DispatchQueue, logger: Logger) {
        self.logger = logger
        let path = history.path
        database = HistoryQueue(history: history, delivery: queue) { waiting in
            if waiting {
                logger.warning("Recents waits for another program's lock on \(path); calls that end are kept (up to 10,000) and recorded when it goes")
            } else {
                logger.notice("Recents: the lock on \(path) is gone; the calls that waited are recorded")
            }
        }
    }

    /// Reads what is kept in memory. Called once, before the service takes its name.
    func load() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            database.read({ history in
                defer { history.releaseMemory() } // the pages read to start with are not needed again soon
                return (try Self.recentHandles(history), try history.missedCount(), try history.favorites())
            }, then: TelephonyActor.onQueue { [self] result in
                do {
                    let (people, missed, favorites) = try result.get()
                    known = KnownHandles(newestFirst: people)
                    recentsVersion &+= 1
                    missedCount = missed
                    setFavorites(favorites)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            })
        }
    }

    /// Whether this handle has called or been called lately (see `KnownHandles`).
    func knows(handle: String) -> Bool { known.contains(handle) }

    /// What `KnownHandles` is made of, read on the database's executor.
    nonisolated static func recentHandles(_ history: CallHistory) throws -> [SearchPerson] {
        try history.recentPeople(limit: KnownHandles.capacity, rows: KnownHandles.rowsScanned).map(searchPerson)
    }

    /// Who a Recents entry was with, as search sees them.
    nonisolated static func searchPerson(_ person: RecentPerson) -> SearchPerson {
        SearchPerson(name: person.callerName, handle: person.handle, handleType: person.handleType,
                     appKey: Provider.appKey(appID: person.appID, name: person.providerName))
    }

    /// After a Delete or Clear: who has called, as the database now says (`recentHandles`, read
    /// in the same turn of its executor), and the entries still waiting to be written.
    func reloadKnown(_ newestFirst: [SearchPerson]) {
        known = KnownHandles(newestFirst: newestFirst)
        for handle in pending.keys { known.touch(handle) }
        recentsVersion &+= 1
    }

    /// Who has called lately, for search: its version and the handles (a copy that costs nothing
    /// until either side changes).
    var recentPeople: (version: UInt64, known: KnownHandles) { (recentsVersion, known) }

    func setFavorites(_ favorites: [Favorite]) {
        favoriteNames = [:]
        for favorite in favorites where favoriteNames[favorite.handle] == nil { favoriteNames[favorite.handle] = favorite.name }
        favoritePeople = favorites.map { SearchPerson(name: $0.name, handle: $0.handle, handleType: $0.handleType, appKey: $0.providerName) }
        favoritesVersion &+= 1
        onFavoritesChanged?()
    }

    /// Records an entry: written when the database lets it, in order. `recorded` runs on the
    /// actor with the entry as written (with its id) and whether the missed count
    /// changed (a missed call recorded, or an unseen one dropped at the limit).
    func record(_ entry: RecentCall, recorded: @escaping @Sendable @TelephonyActor (RecentCall, _ missedCountChanged: Bool) -> Void) {
        known.touch(entry.handle, person: Self.searchPerson(RecentPerson(entry)))
        recentsVersion &+= 1
        pending[entry.handle, default: 0] += 1
        database.write(.entry, { history in try history.recordCountingMissed(entry) }, then: TelephonyActor.onQueue { [self] result in
            if let left = pending[entry.handle], left > 1 { pending[entry.handle] = left - 1 } else { pending[entry.handle] = nil }
            switch result {
            case .success(let (written, missed)):
                if recordingFails { logger.notice("Recents records calls again") }
                recordingFails = false
                let changed = missed != missedCount
                missedCount = missed
                recorded(written, changed)
            case .failure(let error as HistoryQueue.EntryDropped):
                // The first of a spell, then one line per hundred.
                if error.total == 1 || error.total % 100 == 0 {
                    logger.error("Recents is full of calls waiting for the database lock on \(path): the oldest waiting is dropped (\(entry.callUUID)); \(error.total) dropped so far")
                }
            case .failure(let error):
                // Once per spell of failures (a read-only or full disk), not once per call.
                if !recordingFails { logger.error("Recents cannot record calls (calls still work); first lost: \(entry.callUUID): \(error)") }
                recordingFails = true
            }
        })
    }
}
