import AddressBook
import CMalloc
import DBus
import Dispatch
import Localization
import MonkeyCallAPI
import PeopleSearch
import ScreenText
import Synchronization
import TelephonyCore

/// The search over the user's people that `AddressBook.Search`, GNOME Shell's search provider and
/// KRunner's runner share: what they search (the address book's snapshot, Favorites and Recents as
/// kept in memory), where (a queue of its own: the service's queue only hands over references,
/// a search of 10,000 contacts never holds up a call), and how a result is called (through the
/// right app, else the Phone app asks). It keeps nothing per search.
@TelephonyActor
final class PeopleFinder {
    private let context: ServiceContext
    private let controller: CallControllerInterface
    /// How typed and written numbers are read: the address book's, else the locale's.
    nonisolated let numbering: ContactNumbering
    /// Where searches run, in turns, and the indexes are made.
    private nonisolated let queue = SearchQueue(label: "org.monkeycall.search")
    /// Made and read on `queue` only.
    private nonisolated let cache = IndexCache()
    /// A change of the contacts or favorites waits this long for others before it is told.
    static let changeDelay = 0.2
    private var changeDue = false

    init(context: ServiceContext, controller: CallControllerInterface) {
        self.context = context
        self.controller = controller
        numbering = context.addressBook?.configuration.numbering ?? .fromEnvironment()
    }

    /// What a search reads, as of now: references, taken in no time.
    struct Sources: Sendable {
        var contacts: ContactSnapshot
        var favorites: (version: UInt64, people: [SearchPerson])
        var recents: (version: UInt64, known: KnownHandles)
    }

    private func sources() -> Sources {
        let history = context.history
        return Sources(contacts: context.addressBook?.snapshot ?? .empty,
                       favorites: (history?.favoritesVersion ?? 0, history?.favoritePeople ?? []),
                       recents: history?.recentPeople ?? (0, KnownHandles()))
    }

    /// Runs `work` in `requester`'s turn on the search's queue (`SearchQueue`) with indexes of the
    /// people as they are now (made again there first, for what changed since the last search);
    /// `answer` gets what it found, or nil when a newer search of the requester replaced it.
    /// LimitsExceeded when too many searches wait.
    func search<Found: Sendable>(for requester: SearchQueue.Requester, _ work: @escaping @Sendable (Indexes) -> Found,
                                 answer: @escaping @Sendable (Found?) -> Void) throws(DBusError) {
        let sources = sources()
        let cache = cache, numbering = numbering
        try queue.submit(requester, run: { isReplaced in
            let found = work(cache.indexes(for: sources, numbering: numbering))
            answer(isReplaced() ? nil : found)
        }, dropped: { answer(nil) })
    }

    /// How many contacts with a number the address book holds.
    var contactCount: Int { context.addressBook?.snapshot.contactCount ?? 0 }

    // MARK: Changes

    /// The contacts or the favorites changed: after a moment (a source read in batches is one
    /// change), `AddressBook.Changed` and `Count` go to host subscribers, and the indexes are made
    /// again before the next search needs them.
    func peopleChanged() {
        guard !changeDue else { return }
        changeDue = true
        TelephonyActor.queue.asyncAfter(deadline: .now() + Self.changeDelay) { [weak self] in
            TelephonyActor.assumeIsolated { self?.tellChange() }
        }
    }

    private func tellChange() {
        changeDue = false
        do {
            try context.objects.exportedObject(at: Telephony1.rootPath)?.emit(Telephony1.AddressBook.changed)
        } catch {
            context.logger.error("cannot send \(Telephony1.AddressBook.changed.name): \(error)")
        }
        context.rootChanged([Telephony1.AddressBook.count])
        // The indexes made again, at once: and then the heap trimmed. A source's read (1,000 vCard
        // files) and the indexes made from it leave what they parsed and sorted freed in the middle
        // of the heap, where free() gives no page back (about 0.15 MiB of the idle daemon's RSS).
        // (When the queue is full, the next search makes them.)
        try? search(for: SearchQueue.Requester(account: "monkeycalld"), { _ in malloc_trim(0) }, answer: { _ in })
    }

    // MARK: Calling a result

    /// The apps that can place calls now, newest first, one per app.
    func callingApps() -> [CallingApp] {
        var seen = Set<String>()
        return context.switchboard.orderedProviders.reversed().compactMap { provider in
            guard seen.insert(provider.appKey).inserted else { return nil }
            let configuration = provider.configuration
            return CallingApp(appKey: provider.appKey, label: provider.appLabel.isEmpty ? provider.name : provider.appLabel,
                              handleTypes: Set(configuration.supportedHandleTypes.map(\.rawValue)),
                              takesTelLinks: configuration.urlSchemes.contains { $0.lowercased() == "tel" })
        }
    }

    /// Which app calls `hit`, among `apps`.
    func route(_ hit: SearchHit, apps: [CallingApp]) -> CallRoute {
        CallRoute(handleType: hit.handleType, preferred: hit.appKey, apps: apps, telChoice: context.linkClaims.handlers["tel"])
    }

    /// The apps and the user's `tel` choice as they are now, to route results elsewhere (KRunner's
    /// matches, made on the search's queue).
    func routing() -> Routing { Routing(apps: callingApps(), telChoice: context.linkClaims.handlers["tel"]) }

    /// Calls `hit`: through `app` when given (a KRunner action), else through the app routing
    /// picks; when none is clear, or the call cannot start, the Phone app opens to ask.
    /// `platformData`: for the Phone app's window (an activation token).
    func call(_ hit: SearchHit, through app: String? = nil, from requester: String, platformData: [String: DBusValue] = [:]) throws {
        // An id is the caller's to make: one whose handle holds controls or bidi characters is
        // refused here, before the Phone app could be asked to call it.
        if let refusal = ScreenText.handleRefusal(hit.handle, named: "the result's handle") { throw DBusError.invalidArgs(refusal) }
        let apps = callingApps()
        let chosen: CallingApp?
        if let app {
            guard let found = apps.first(where: { $0.appKey == app && $0.calls(hit.handleType) }) else {
                throw DBusError.invalidArgs("no running app '\(app.prefix(64))' can call \(hit.handleType) handles")
            }
            chosen = found
        } else if case .app(let routed) = route(hit, apps: apps) {
            chosen = routed
        } else {
            chosen = nil
        }
        guard let chosen, let type = HandleType(rawValue: hit.handleType) else {
            return askPhone(PhoneApp.Action.call, hit.handle, platformData: platformData)
        }
        do {
            let uuid = try controller.startCall(to: Handle(type: type, value: hit.handle), through: chosen.appKey, from: requester)
            context.logger.info("search: a call (\(uuid)) through \(chosen.appKey), from a \(hit.source.rawValue) result")
        } catch {
            context.logger.notice("search: the call through \(chosen.appKey) did not start (\(error)); the Phone app asks")
            askPhone(PhoneApp.Action.call, hit.handle, platformData: platformData)
        }
    }

    /// Runs one of the Phone app's actions (`call`, `search`), starting it by D-Bus activation.
    func askPhone(_ action: String, _ argument: String, platformData: [String: DBusValue] = [:]) {
        context.askPhone(action, argument, platformData: platformData)
    }
}

/// Which apps can call, and the user's `tel` choice, as they were when a search began.
struct Routing: Sendable {
    let apps: [CallingApp]
    let telChoice: String?

    func route(_ hit: SearchHit) -> CallRoute {
        CallRoute(handleType: hit.handleType, preferred: hit.appKey, apps: apps, telChoice: telChoice)
    }
}

/// The indexes a search reads: each made from its source once, when it changed.
struct Indexes: Sendable {
    let favorites: PeopleIndex
    let contacts: ContactsIndex
    let recents: PeopleIndex
    /// The favorites' numbers, for `IsFavorite`.
    let favoriteNumbers: Set<Int64>
    let numbering: ContactNumbering

    func find(_ query: SearchQuery, limit: Int = PeopleSearch.resultLimit) -> [SearchHit] {
        PeopleSearch.find(query, favorites: favorites, contacts: contacts, recents: recents, numbering: numbering, limit: limit)
    }
}

/// The indexes of the last search, kept for the next: made again only for what changed (the
/// address book's snapshot, the favorites' or Recents' version). Used on the finder's queue only:
/// its lock, taken once a search, is never contended; it lets the compiler check the sharing.
private final class IndexCache: Sendable {
    private struct Cached {
        var contacts = ContactsIndex.empty
        var favorites = PeopleIndex.empty
        var favoriteNumbers: Set<Int64> = []
        var recents = PeopleIndex.empty
    }

    private let cached = Mutex(Cached())

    func indexes(for sources: PeopleFinder.Sources, numbering: ContactNumbering) -> Indexes {
        cached.withLock { cached in
            if cached.contacts.snapshot !== sources.contacts { cached.contacts = ContactsIndex(sources.contacts) }
            if cached.favorites.version != sources.favorites.version {
                cached.favorites = PeopleIndex(version: sources.favorites.version, people: PeopleIndex.sortedByName(sources.favorites.people),
                                               numbering: numbering)
                cached.favoriteNumbers = Set(cached.favorites.numbers)
            }
            if cached.recents.version != sources.recents.version {
                cached.recents = PeopleIndex(version: sources.recents.version, people: sources.recents.known.people(), numbering: numbering)
            }
            return Indexes(favorites: cached.favorites, contacts: cached.contacts, recents: cached.recents, favoriteNumbers: cached.favoriteNumbers,
                           numbering: numbering)
        }
    }
}
