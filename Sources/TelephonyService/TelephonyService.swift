import DBus
import MonkeyCallAPI
import Foundation
import CallHistory
import DesktopNotifications
import Logging
import TelephonyCore

/// Settings of the service that the daemon's options set.
public struct ServiceOptions: Sendable {
    public var actionTimeout: Double = 10
    public var ringTimeout: Double = 45
    public var limits = SwitchboardLimits()
    /// Settings (Do Not Disturb, block list) and call directories; nil keeps settings in memory only.
    public var dataDirectory: String?
    /// Media players pause during calls (unless the user's `PausesMediaDuringCalls` says no); false turns it off for good.
    public var pausesMedia = true
    /// Where logind is: the machine is kept awake during calls. Nil: no inhibitor.
    public var systemBusAddress: String?
    /// Follows the desktop's Do Not Disturb as well as ours: the notification server's `Inhibited`
    /// here, GNOME's through the `DesktopDoNotDisturb` the daemon passes in.
    public var followsDesktopDoNotDisturb = true
    public init() {}
}

/// The telephony core published on D-Bus: the root object (`Manager`,
/// `CallController`, ObjectManager), one object per provider and per call.
///
/// Everything runs on the connection's queue: D-Bus handlers, the
/// switchboard, its timers and its events. No locks.
public final class TelephonyService: @unchecked Sendable {
    public let connection: Connection
    let options: ServiceOptions
    let switchboard: Switchboard
    let logger: Logger

    /// The properties each live call last published: property reads and change diffs use them as they are.
    var published: [UUID: [String: DBusValue]] = [:]
    var callObjects: [UUID: ExportedObject] = [:]
    var providerObjects: [ProviderID: ExportedObject] = [:]
    var providerOwners: [ProviderID: String] = [:]
    /// One watch per connection that owns providers: when it leaves, they go.
    var ownerWatches: [String: Subscription] = [:]
    /// Rings through desktop notifications, when the daemon has a notifier.
    var ringer: Ringer?
    /// Who owns org.freedesktop.Notifications, and the watches that follow it.
    var notificationServerOwner: String?
    var notificationServerWatches: [Subscription] = []
    /// GNOME's Do Not Disturb, when the daemon follows it.
    private let desktopDoNotDisturb: DesktopDoNotDisturb?
    /// Media players paused during calls.
    private(set) var mediaPause: MediaPause!
    /// Keeps the machine awake during calls.
    private var sleepInhibitor: SleepInhibitor?
    /// Recents and Favorites; nil when the database could not be opened (see `historyProblem`).
    let history: HistoryStore?
    let historyProblem: String?
    /// Who rings: block list, directories, Do Not Disturb.
    let screening: Screening
    /// Which app opens each link scheme.
    let linkClaims: LinkClaims
    /// Favorite names by handle, kept in memory: caller names are read on every call change.
    var favoriteNames: [String: String] { history?.favoriteNames ?? [:] }
    /// What ended calls were, for missed-call "Call back": provider and handle by call UUID.
    var missedCalls: [String: (provider: ProviderID, handle: Handle)] = [:]

    /// `clock`: the switchboard's time and timers (ring and action timeouts); nil is the real clock on the
    /// connection's queue. Another clock must run its tasks on that queue too: a test advances a
    /// `ManualClock` inside `connection.onQueueSync`.
    /// `databasePath`: Recents and Favorites; when it cannot be opened the service runs without them and says why.
    /// `desktopDoNotDisturb`: GNOME's Do Not Disturb, followed as well as ours.
    public init(connection: Connection, options: ServiceOptions = .init(), clock: (any TelephonyClock)? = nil, notifier: Notifier? = nil,
                databasePath: String? = nil, desktopDoNotDisturb: DesktopDoNotDisturb? = nil, logger: Logger = Logger(label: "monkeycall")) {
        self.connection = connection
        self.options = options
        self.desktopDoNotDisturb = desktopDoNotDisturb
        self.logger = logger
        var history: HistoryStore?
        var problem: String? = databasePath == nil ? "the service runs without a database" : nil
        if let databasePath {
            do {
                // Its executor tries again when another program holds a lock: each try waits only a little.
                history = HistoryStore(try CallHistory(path: databasePath, busyTimeout: 0.05), queue: connection.queue, logger: logger)
            } catch {
                problem = "cannot open \(databasePath): \(error)"
                logger.error("Recents and Favorites are unavailable (calls still work): \(problem!)")
            }
        }
        self.history = history
        self.historyProblem = problem
        screening = Screening(folder: options.dataDirectory, queue: connection.queue, logger: logger)
        linkClaims = LinkClaims(folder: options.dataDirectory, logger: logger)
        var switchboardOptions = SwitchboardOptions()
        switchboardOptions.actionTimeout = options.actionTimeout
        switchboardOptions.ringTimeout = options.ringTimeout
        switchboardOptions.limits = options.limits
        switchboard = Switchboard(clock: clock ?? DispatchClock(queue: connection.queue), options: switchboardOptions)
        if let notifier { ringer = Ringer(notifier: notifier, service: self) }
        if let address = options.systemBusAddress { sleepInhibitor = SleepInhibitor(systemBusAddress: address, service: connection, logger: logger) }
        // Weak: a round of pausing may still run after the service is gone (it then pauses nothing).
        mediaPause = MediaPause(connection: connection, logger: logger) { [weak self] in
            guard let self else { return false }
            return options.pausesMedia && screening.settings.pausesMediaDuringCalls
        }
    }

    /// Handlers hold the service weakly: a call that arrives while it is being torn down gets this.
    static let stopping = DBusError(name: DBusError.Name.serviceUnknown, message: "monkeycalld is stopping")

    public enum StartError: Error, CustomStringConvertible {
        case nameTaken(owner: String?)
        public var description: String {
            switch self {
            case .nameTaken(let owner):
                "\(Telephony1.busName) is already owned by \(owner ?? "another connection") (is monkeycalld already running?); use --replace to take it over"
            }
        }
    }

    /// Exports the objects, then takes the well-known name (in that order, so
    /// that no early call finds nothing). Throws `nameTaken` when another owner keeps it.
    public func start(replace: Bool = false) async throws {
        do {
            try await history?.load()
        } catch {
            logger.error("cannot read Recents and Favorites from \(history?.path ?? ""): \(error)")
        }
        await connection.performOnQueue { [self] in
            connection.setAccessPolicy(ServiceAccessPolicy(service: self))
            switchboard.onEvent = { [weak self] event in self?.handle(event) }
            do {
                try connection.export(Telephony1.rootPath, [managerInterface(), callControllerInterface(), callDirectoryInterface(), recentsInterface(), favoritesInterface()])
            } catch {
                preconditionFailure("root object exported twice: \(error)")
            }
            connection.addObjectManager(at: Telephony1.rootPath)
        }
        try await connection.followNameOwners()
        try await followNotificationServer()
        if let desktopDoNotDisturb, options.followsDesktopDoNotDisturb { follow(desktopDoNotDisturb) }
        let result = try await connection.requestName(Telephony1.busName, replace: replace, allowReplacement: true)
        guard result == .primaryOwner || result == .alreadyOwner else {
            throw StartError.nameTaken(owner: try? await connection.nameOwner(Telephony1.busName))
        }
        logger.info("serving \(Telephony1.busName) on \(connection.uniqueName)")
    }

    /// Gives the name back; the objects stay until the connection closes. Writes still waiting
    /// (settings, a directory being completed, Recents entries waiting for a lock) get a few seconds.
    public func stop() async {
        try? await connection.releaseName(Telephony1.busName)
        // Stopped during a call: the music it paused plays again.
        await connection.performOnQueue { [self] in mediaPause.audioSession(held: false) }
        await settleMedia()
        await settleStorage(timeout: 5)
    }

    /// Waits until what was handed to the disk is written, or `timeout` seconds have passed.
    public func settleStorage(timeout: Double = 5) async {
        await screening.settle()
        await linkClaims.settle()
        if let history, case let left = await history.database.settle(timeout: timeout), left > 0 {
            logger.error("stopping with \(left) Recents writes still waiting for the lock on \(history.path): they are lost")
        }
    }

    /// Waits until the media players being paused or resumed are done with.
    public func settleMedia() async {
        await mediaPause.settle()
    }

    // MARK: Events from the switchboard

    func handle(_ event: SwitchboardEvent) {
        switch event {
        case .providerRegistered(let provider):
            exportProvider(provider)
        case .providerRemoved(let provider):
            dropDirectoryUpdate(provider)
            connection.unexport(Telephony1.providerPath(provider.id.rawValue))
            providerObjects[provider.id] = nil
            providerOwners[provider.id] = nil
            if switchboard.providers(ownedBy: provider.owner).isEmpty { ownerWatches[provider.owner] = nil }
            logger.info("provider \(provider.id) '\(provider.name)' removed")
        case .callAdded(let call):
            published[call.uuid] = Encode.properties(of: call, callerName: callerName(of: call))
            exportCall(call)
            providerObjects[call.provider]?.propertiesChanged([Telephony1.Provider.calls])
            ringer?.update(call)
            sleepInhibitor?.update(call, reason: sleepInhibitionReason(call))
        case .callChanged(let call):
            let before = published[call.uuid] ?? [:]
            let after = Encode.properties(of: call, callerName: callerName(of: call))
            published[call.uuid] = after
            let changed = after.keys.filter { before[$0] != after[$0] }.sorted()
            callObjects[call.uuid]?.propertiesChanged(changed, on: Telephony1.Call.interface)
            ringer?.update(call)
            sleepInhibitor?.update(call, reason: sleepInhibitionReason(call))
        case .callRemoved(let call):
            published[call.uuid] = nil
            callObjects[call.uuid] = nil
            connection.unexport(Telephony1.callPath(call.uuid.apiString))
            providerObjects[call.provider]?.propertiesChanged([Telephony1.Provider.calls])
            if call.endReason == .unanswered && !call.outgoing { rememberMissed(call) }
            recordEnded(call)
            ringer?.ended(call)
            sleepInhibitor?.update(call, ended: true, reason: sleepInhibitionReason(call))
        case .performAction(let action):
            emitToProvider(action.provider, Telephony1.Provider.performAction,
                           action.id.apiString, action.kind.name, action.callUUID.apiString, Encode.arguments(of: action))
        case .actionTimedOut(let action):
            emitToProvider(action.provider, Telephony1.Provider.timedOutPerformingAction,
                           action.id.apiString, action.kind.name, action.callUUID.apiString)
        case .transactionCompleted(let transaction, let error):
            guard let requester = transaction.requester else { return }
            let failure = error?.dbusError
            try? connection.exportedObject(at: Telephony1.rootPath)?.emit(
                Telephony1.CallController.transactionCompleted,
                transaction.id.apiString, error == nil, failure?.name ?? "", failure?.message ?? "", to: requester)
        case .audioSessionActivated(let id):
            emitToProvider(id, Telephony1.Provider.didActivateAudioSession)
            mediaPause.audioSession(held: true)
        case .audioSessionDeactivated(let id):
            emitToProvider(id, Telephony1.Provider.didDeactivateAudioSession)
            // Passing from one call's provider to another's is a deactivation then an activation:
            // only when the dust has settled is it known whether any call still holds it.
            connection.queue.async { [weak self] in
                guard let self else { return }
                mediaPause.audioSession(held: switchboard.audioSessionHolder != nil)
            }
        }
    }

    /// Names the first call that is up ("Call with Alice"), or nil when none is.
    private func sleepInhibitionReason(_ call: Call) -> String {
        let name = callerName(of: call)
        return "Call with \(name.isEmpty ? call.handle.value : name)"
    }

    /// Provider signals go to the provider's own connection only.
    func emitToProvider<each A: DBusRepresentable>(_ id: ProviderID, _ signal: SignalSpec<Args<repeat each A>>, _ values: repeat each A) {
        guard let owner = providerOwners[id] else { return }
        do {
            try connection.emit(signal, path: Telephony1.providerPath(id.rawValue), repeat each values, destination: owner)
        } catch {
            logger.error("cannot send \(signal.name) to provider \(id): \(error)")
        }
    }

    // MARK: Missed calls

    private func rememberMissed(_ call: Call) {
        // Bounded: a "Call back" on a very old missed call simply does nothing.
        if missedCalls.count >= 256, let oldest = missedCalls.keys.first { missedCalls[oldest] = nil }
        missedCalls[call.uuid.apiString] = (call.provider, call.handle)
    }

    /// "Call back" on a missed call: a call to the same handle through the same provider.
    func callBack(missed uuid: String) throws {
        guard let missed = missedCalls.removeValue(forKey: uuid) else { return }
        _ = try switchboard.requestTransaction([.start(UUID(), handle: missed.handle, provider: missed.provider)], requester: nil)
    }

    /// Runs a transaction for `requester` and returns its UUID in the API's form.
    func request(_ actions: [ActionRequest], from requester: String) throws -> String {
        try switchboard.requestTransaction(actions, requester: requester, app: appID(of: requester)).id.apiString
    }
}
