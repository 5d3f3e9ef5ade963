import AddressBook
import CallDirectory
import CallHistory
import DBus
import DesktopNotifications
import Dispatch
import FoundationEssentials
import Logging
import MonkeyCallAPI
import Ringtone
import Synchronization
import TelephonyCore

/// Settings of the service that the daemon's options set.
public struct ServiceOptions: Sendable {
    public var actionTimeout: Double = 10
    public var ringTimeout: Double = 45
    public var limits = SwitchboardLimits()
    /// What one app's calls may take on the wire a second, after a burst (`ObjectServer.limitArgumentBytesPerAccount`).
    public var argumentBytesPerSecond = 32 << 20
    /// Settings (Do Not Disturb, block list) and call directories; nil keeps settings in memory only.
    public var dataDirectory: String?
    /// Media players pause during calls (unless the user's `PausesMediaDuringCalls` says no); false turns it off for good.
    public var pausesMedia = true
    /// Where logind is: the machine is kept awake during calls. Nil: no inhibitor.
    public var systemBusAddress: String?
    /// Follows the desktop's Do Not Disturb as well as ours: the notification server's `Inhibited`
    /// here, GNOME's through the `DesktopDoNotDisturb` the daemon passes in.
    public var followsDesktopDoNotDisturb = true
    /// Recents keeps at most this many entries; the oldest go.
    public var recentsLimit = CallHistory.defaultRecentsLimit
    /// Calls that are up have an ongoing-call notification (unless the user's `ShowsCallControls`
    /// says no); false turns it off for good.
    public var showsCallControls = true
    /// The service plays the ringtone of the call that rings (`monkeycalld --no-ringtone`: the
    /// notification server's sound, once, as before).
    public var playsRingtone = true
    /// Callers are named from the user's address book (`AddressBook.Configuration.standard`: GNOME's
    /// address books, KPeople's vCard store, `monkeycalld --contacts` folders), read in the
    /// background from `start()`. Nil: no address book (the default, as in-process tests want).
    public var addressBook: AddressBook.Configuration?
    /// GNOME Shell's search provider and KRunner's runner are served (`monkeycalld --no-search-provider`: not).
    public var servesSystemSearch = true
    public init() {}
}

/// The telephony core published on D-Bus: the composition root that builds the exported
/// objects (root `Manager`, `CallController`, `CallDirectory`, `Recents`, `Favorites`,
/// `AddressBook`; GNOME Shell's and KRunner's search at `/Search` and `/Runner`; one object
/// per provider and per call) and the observers of the switchboard's events, and wires them to
/// the connection. Each object owns its own state; this owns none beyond them.
///
/// Everything runs on the `TelephonyActor`, whose queue drives the connection: D-Bus handlers,
/// the switchboard, its timers and its events. No locks.
@TelephonyActor
public final class TelephonyService {
    /// The Phone app's id when it is installed (its desktop file is in the data folders): the
    /// `desktop-entry` of call cards whose app has no desktop file, so that the desktop's per-app
    /// notification settings (details on the lock screen) apply to every call.
    public nonisolated static func installedPhoneApp() -> String? {
        AppActivation.desktopFile(PhoneApp.appID) == nil ? nil : PhoneApp.appID
    }

    /// The desktop's own observers, by the names their connections own: the Phone app, and GNOME
    /// Shell (the extension's lock-screen card and top-bar call run in the shell's connection).
    /// They always may subscribe; one connection owns a name, so they are at most as many.
    public nonisolated static let reservedObservers: Set<String> = [PhoneApp.appID, Desktop.ShellExtensions.busName]

    public nonisolated let connection: Connection
    let context: ServiceContext
    var switchboard: Switchboard { context.switchboard }
    private var logger: Logger { context.logger }
    private let manager: ManagerObject
    private let providers: ProviderObjects
    private let controller: CallControllerInterface
    private let directories: DirectoryInterfaces
    private let recents: RecentsInterface
    private let favorites: FavoritesInterface
    /// The user's people searched: `AddressBook`, GNOME Shell's and KRunner's search.
    private let finder: PeopleFinder
    private let addressBookInterface: AddressBookInterface
    private let searchProvider: SearchProviderObject
    private let runner: RunnerObject
    /// Follows the notification server and the desktop's Do Not Disturb.
    private let desktopSources: DesktopDoNotDisturbSources
    /// GNOME's Do Not Disturb, when the daemon follows it.
    private let desktopDoNotDisturb: DesktopDoNotDisturb?
    /// Media players paused during calls.
    private let mediaPause: MediaPause
    /// Where the switchboard's events go: the bus publisher, the session effects, the presenter.
    private let sinks: EventSinks

    /// `connection`: driven on `TelephonyActor.queue` (`Connection(address:queue:)`).
    /// `clock`: the switchboard's time and timers (ring and action timeouts); nil is the real clock on the
    /// actor's queue. Another clock must run its tasks on that queue too: a test advances a
    /// `ManualClock` on the actor.
    /// `databasePath`: Recents and Favorites; when it cannot be opened the service runs without them and says why.
    /// `desktopDoNotDisturb`: GNOME's Do Not Disturb, followed as well as ours.
    public init(connection: Connection, options: ServiceOptions = .init(), clock: (any TelephonyClock)? = nil, notifier: Notifier? = nil,
                databasePath: String? = nil, desktopDoNotDisturb: DesktopDoNotDisturb? = nil, logger: Logger = Logger(label: "monkeycall")) {
        // The connection's handlers enter the actor where they run: on its queue.
        precondition(connection.queue === TelephonyActor.queue, "the service's connection is driven on TelephonyActor.queue")
        self.connection = connection
        self.desktopDoNotDisturb = desktopDoNotDisturb
        var history: HistoryStore?
        var problem: String? = databasePath == nil ? "the service runs without a database" : nil
        if let databasePath {
            do {
                // Its executor tries again when another program holds a lock: each try waits only a little.
                history = HistoryStore(try CallHistory(path: databasePath, busyTimeout: 0.05, recentsLimit: options.recentsLimit), queue: connection.queue, logger: logger)
            } catch {
                problem = "cannot open \(databasePath): \(errorText(error))"
                logger.error("Recents and Favorites are unavailable (calls still work): \(problem!)")
            }
        }
        let screening = Screening(folder: options.dataDirectory, logger: logger)
        var switchboardOptions = SwitchboardOptions()
        switchboardOptions.actionTimeout = options.actionTimeout
        switchboardOptions.ringTimeout = options.ringTimeout
        switchboardOptions.limits = options.limits
        let switchboard = Switchboard(clock: clock ?? DispatchClock(queue: connection.queue), options: switchboardOptions)
        let contactsFollower = ContactsFollower()
        let addressBook = options.addressBook.map { configuration in
            let counted = ContactCount()
            return AddressBook(configuration: configuration, logger: logger) { event in
                Self.log(event, counted, logger: logger)
                if case .changed = event { TelephonyActor.enter { contactsFollower.service?.userNamesChanged() } }
            }
        }
        let context = ServiceContext(connection: connection, options: options, switchboard: switchboard, screening: screening,
                                     history: history, historyProblem: problem, addressBook: addressBook, logger: logger)
        self.context = context
        // The switchboard names callers and screens calls through the context (weakly: it owns the switchboard).
        switchboard.screening = context
        controller = CallControllerInterface(context: context)
        directories = DirectoryInterfaces(context: context, notifier: notifier)
        recents = RecentsInterface(context: context, controller: controller)
        favorites = FavoritesInterface(context: context, controller: controller)
        finder = PeopleFinder(context: context, controller: controller)
        addressBookInterface = AddressBookInterface(finder: finder)
        searchProvider = SearchProviderObject(finder: finder)
        runner = RunnerObject(finder: finder)
        providers = ProviderObjects(context: context, directories: directories)
        let board = notifier.map { NotificationBoard(notifier: $0) }
        let showApp = AppActivation(context: context)
        // The service rings itself unless told not to (`--no-ringtone`): a notification server plays a sound once at most.
        let ringtone = options.playsRingtone ? CallRingtone(ringer: Ringer(applicationName: "MonkeyCall", logger: logger), service: context) : nil
        let callNotifications = board.map { CallNotifications(board: $0, service: context, showApp: showApp, ringtone: ringtone) }
        let links = LinkConfirmation(board: board, context: context, controller: controller)
        manager = ManagerObject(context: context, providers: providers, controller: controller, links: links, callNotifications: callNotifications)
        desktopSources = DesktopDoNotDisturbSources(context: context, board: board)
        let sleepInhibitor = options.systemBusAddress.map { address in
            SleepInhibitor(systemBusAddress: address, switchboard: switchboard, logger: logger) { call in
                // Names the call that keeps the machine awake ("Call with Alice").
                let name = call.displayName
                return "Call with \(name.isEmpty ? call.handle.value : name)"
            }
        }
        // Weak: a round of pausing may still run after the service is gone (it then pauses nothing).
        mediaPause = MediaPause(connection: connection, switchboard: switchboard, logger: logger) { [weak context] in
            guard let context else { return false }
            return options.pausesMedia && context.screening.settings.pausesMediaDuringCalls
        }
        let calls = CallObjects(context: context, controller: controller)
        sinks = EventSinks(bus: BusPublisher(directories: directories, calls: calls, providers: providers, controller: controller),
                           session: SessionEffects(recents: recents, sleepInhibitor: sleepInhibitor, mediaPause: mediaPause),
                           presenter: callNotifications)
        contactsFollower.service = self
        // Favorites name callers as contacts do.
        context.history?.onFavoritesChanged = { [weak self] in self?.userNamesChanged() }
    }

    public enum StartError: Error, CustomStringConvertible {
        case nameTaken(owner: String?)
        public var description: String {
            switch self {
            case .nameTaken(let owner):
                "\(Telephony1.busName) is already owned by \(owner ?? "another connection") (is monkeycalld already running? "
                    + "systemctl --user restart monkeycalld restarts it)"
            }
        }
    }

    /// Exports the objects, then takes the well-known name (in that order, so
    /// that no early call finds nothing). Throws `nameTaken` when another owner keeps it.
    public func start() async throws {
        // First, for a head start (a D-Bus activation's first call comes right after the name): read in
        // the background, so it returns at once, and until a source is read its callers have no name.
        context.addressBook?.start()
        do {
            try await context.history?.load()
        } catch {
            logger.error("cannot read Recents and Favorites from \(context.history?.path ?? ""): \(error)")
        }
        let objects = context.objects
        objects.setAccessPolicy(ServiceAccessPolicy(context: context))
        objects.limitVariantDictionaries(to: Telephony1.maximumDictionaryEntries)
        objects.limitArrays(to: Telephony1.maximumArrayElements)
        objects.limitArgumentBytes(to: Telephony1.maximumArgumentBytes)
        objects.limitArgumentBytesPerAccount(burst: 128 << 20, perSecond: context.options.argumentBytesPerSecond)
        objects.onSubscriptionDropped { [context] subscriber in
            TelephonyActor.assumeIsolated {
                context.logger.warning("\(subscriber) stopped reading its signals: its subscription is dropped (it may subscribe again)")
                try? context.connection.emit(Telephony1.Manager.subscriptionDropped, path: Telephony1.rootPath,
                                             "it stopped reading: its signals went unread", destination: subscriber.name)
            }
        }
        sinks.listen(to: switchboard)
        do {
            try objects.export(Telephony1.rootPath, [manager.interface(), controller.interface(), directories.interface(),
                                                        recents.interface(), favorites.interface(), addressBookInterface.interface()])
            // The desktop's search, beside the API: not among the objects the root manages.
            if context.options.servesSystemSearch {
                try objects.export(Telephony1.searchPath, [searchProvider.interface()], managed: false)
                try objects.export(Telephony1.runnerPath, [runner.interface()], managed: false)
            }
        } catch {
            preconditionFailure("root object exported twice: \(error)")
        }
        objects.addObjectManager(at: Telephony1.rootPath)
        try await connection.followNameOwners()
        // The desktop's own observers always may subscribe, however many the user's other processes are.
        objects.reserveSubscriptions(for: TelephonyService.reservedObservers)
        await mediaPause.followPlayers()
        try await desktopSources.followNotificationServer()
        if let desktopDoNotDisturb, context.options.followsDesktopDoNotDisturb { desktopSources.follow(desktopDoNotDisturb) }
        // Never replaceable: any app on the bus could otherwise take the name and play the service.
        let result = try await connection.requestName(Telephony1.busName, allowReplacement: false)
        guard result == .primaryOwner || result == .alreadyOwner else {
            context.addressBook?.stop()
            throw StartError.nameTaken(owner: try? await connection.nameOwner(Telephony1.busName))
        }
        // Only now: a second instance that did not get the name must not touch the first one's files.
        context.screening.removeLeftoverTemporaryFiles()
        logger.info("serving \(Telephony1.busName) on \(connection.uniqueName)")
    }

    /// Ends the calls still up, gives the name back; the objects stay until the connection closes. Writes still waiting
    /// (settings, a directory being completed, Recents entries waiting for a lock) get a few seconds.
    public func stop() async {
        // Every call still up ends (failed, recorded in Recents) and its app hears DidReset: "every call ended".
        let told = switchboard.endAllCalls(reason: .failed)
        providers.reset(told)
        if !told.isEmpty { logger.info("stopping: the calls still up have ended; \(told.count) app(s) told") }
        try? await connection.releaseName(Telephony1.busName)
        // GNOME's address-book helper exits; the index stays for the calls still being recorded.
        context.addressBook?.stop()
        // Stopped during a call: the music it paused plays again.
        mediaPause.audioSession(held: false)
        await settleMedia()
        await settleStorage(timeout: 5)
    }

    /// Waits until what was handed to the disk is written, or `timeout` seconds have passed.
    public func settleStorage(timeout: Double = 5) async {
        await context.screening.settle()
        await context.linkClaims.settle()
        if let history = context.history, case let left = await history.database.settle(timeout: timeout), left > 0 {
            logger.error("stopping with \(left) Recents writes still waiting for the lock on \(history.path): they are lost")
        }
    }

    /// Waits until the media players being paused or resumed are done with.
    public func settleMedia() async {
        await mediaPause.settle()
    }

    /// What the address book tells, on its own queue: problems are logged by the book itself.
    private nonisolated static func log(_ event: AddressBookEvent, _ counted: ContactCount, logger: Logger) {
        switch event {
        case .sourceReady(let source):
            logger.info("contacts: \(source) read; \(counted.contacts.load(ordering: .relaxed)) contacts with a number in all")
        case .evolutionDataServer(let running):
            logger.info("contacts: evolution-data-server \(running ? "is running: reading GNOME's address books" : "is not running")")
        case .changed(let snapshot):
            counted.contacts.store(snapshot.contactCount, ordering: .relaxed)
            logger.debug("contacts: \(snapshot.contactCount) contacts, \(snapshot.numberCount) numbers")
        case .problem:
            break
        }
    }

    /// A contact or a favorite was added, edited or removed: the calls up show the name they would
    /// now ring with (the notification, the call object): each call whose name changed changes.
    private func userNamesChanged() {
        switchboard.renameCallers()
        finder.peopleChanged()
    }
}

/// Who hears that the contacts changed: the service, once it is made (the address book is made first).
@TelephonyActor
private final class ContactsFollower {
    weak var service: TelephonyService?
}

/// The address book's latest count, for its log lines (written and read on the address book's queue).
private final class ContactCount: Sendable {
    let contacts = Atomic<Int>(0)
}

extension TelephonyService {
    /// Runs `work` on the actor with the service's clock, which must be the `ManualClock` it was
    /// made with: how a test moves time on (the timeouts that fall due fire inside `work`).
    public func onManualClock<T: Sendable>(_ work: (ManualClock) -> T) -> T {
        guard let clock = switchboard.clock as? ManualClock else { preconditionFailure("the service runs on the real clock") }
        return work(clock)
    }
}
