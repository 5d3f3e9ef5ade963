import AddressBook
import ArgumentParser
import CMalloc
import DBus
import DesktopNotifications
import FoundationEssentials
import Glibc
import Localization
import Logging
import MonkeyCallAPI
import QueueExecutor
import ServiceLifecycle
import TelephonyCore
import TelephonyService

/// The daemon's program: `monkeycalld`, or the `monkeycall` program started by that name.
public enum DaemonProgram {
    public static func main() { Daemon.main() }
}

struct Daemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycalld",
        abstract: "The MonkeyCall telephony service: owns org.monkeycall.Telephony1 on the session bus.",
        version: Release.description(of: "monkeycalld")
    )

    @Option(help: "Bus address to connect to instead of the session bus (DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus).")
    var address: String?

    @Option(help: "Seconds a provider has to fulfil or fail an action.")
    var actionTimeout: Double = 10

    @Option(help: "Seconds an incoming call rings before it is ended as unanswered.")
    var ringTimeout: Double = 45

    @Option(help: ArgumentHelp("New incoming calls one app may report per second, after a burst of twice as many; 0 turns the flood guard off.",
                               valueName: "calls"))
    var incomingCallRate: Double = SwitchboardLimits().incomingCallsPerSecond

    @Option(help: ArgumentHelp("Providers one app may register in a minute, after a burst of as many; 0 lifts the limit (for a benchmark that registers in rounds).",
                               valueName: "registrations"))
    var registrationRate: Int = SwitchboardLimits().registrationsPerMinute

    @Option(help: ArgumentHelp("Providers one app (a sandboxed app, or a host process whatever its Names) may have registered at once (for a benchmark that plays many apps from one process).",
                               valueName: "providers"))
    var providersPerApp: Int = SwitchboardLimits().maximumProvidersPerApp

    @Option(help: ArgumentHelp("Connections of one app (a sandboxed app, or a host process) that may subscribe to the service's signals (for a benchmark that plays many apps from one process).",
                               valueName: "connections"))
    var subscriptionsPerApp: Int = SwitchboardLimits().maximumSubscriptionsPerApp

    @Option(help: ArgumentHelp("Bytes of arguments one app (a sandboxed app, or a host process) may send a second once it has sent 128 MiB; 0: never again until the service restarts (for a test that counts them).",
                               valueName: "bytes"))
    var argumentBytesRate: Int = ServiceOptions().argumentBytesPerSecond

    @Option(help: "The Recents and Favorites database; settings and call directories go beside it (default: $XDG_DATA_HOME/monkeycall/monkeycall.sqlite, else $HOME/.local/share/monkeycall/monkeycall.sqlite).")
    var database: String?

    @Option(help: ArgumentHelp("Recents keeps at most this many calls; the oldest go.", valueName: "N"))
    var recentsLimit: Int = ServiceOptions().recentsLimit

    @Flag(inversion: .prefixedNo, help: "Ring with desktop notifications (org.freedesktop.Notifications).")
    var notifications = true

    @Flag(inversion: .prefixedNo, help: "Show an ongoing-call notification (Hang Up, Mute, Hold, the app) for every call that is up; the ShowsCallControls setting can turn it off too.")
    var callControls = true

    @Flag(inversion: .prefixedNo, help: "Play the ringtone of a ringing call through the sound server, looped until the call stops ringing; --no-ringtone leaves the sound to the notification server (played once, if at all).")
    var ringtone = true

    @Flag(inversion: .prefixedNo, help: "Pause media players (MPRIS) during calls and resume them after; the PausesMediaDuringCalls setting can turn it off too.")
    var pauseMedia = true

    @Flag(inversion: .prefixedNo, help: "Keep the machine from sleeping during calls (a logind inhibitor).")
    var inhibitSleep = true

    @Option(help: "The system bus, where logind is (default: DBUS_SYSTEM_BUS_ADDRESS, else the standard socket).")
    var systemBusAddress: String?

    @Flag(inversion: .prefixedNo, help: "Honour the desktop's Do Not Disturb (GNOME's, the notification server's Inhibited) as well as ours.")
    var desktopDoNotDisturb = true

    @Option(help: ArgumentHelp("A folder of vCard files (*.vcf, at any depth: a vdir, as vdirsyncer and khard keep) whose contacts name callers, "
                               + "besides GNOME's address books and KPeople's $XDG_DATA_HOME/kpeoplevcard; followed while the daemon runs (repeatable).",
                               valueName: "folder"))
    var contacts: [String] = []

    @Flag(inversion: .prefixedNo, help: "Name callers from the user's address book (GNOME's contacts, vCard folders); contacts also ring through Silence Unknown Callers.")
    var addressBook = true

    @Flag(inversion: .prefixedNo, help: "Serve GNOME Shell's search provider and KRunner's runner: favorites, contacts and Recents found from the desktop's search, and called from there.")
    var searchProvider = true

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"


    func validate() throws {
        guard actionTimeout > 0, ringTimeout > 0 else { throw ValidationError("timeouts must be positive") }
        guard incomingCallRate >= 0, incomingCallRate.isFinite else { throw ValidationError("--incoming-call-rate must be 0 or more") }
        guard registrationRate >= 0 else { throw ValidationError("--registration-rate must be 0 or more") }
        guard providersPerApp >= 1, subscriptionsPerApp >= 1 else { throw ValidationError("--providers-per-app and --subscriptions-per-app must be 1 or more") }
        guard recentsLimit >= 1 else { throw ValidationError("--recents-limit must be 1 or more") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level '\(logLevel)'") }
        guard addressBook || contacts.isEmpty else { throw ValidationError("--contacts needs the address book: drop --no-address-book") }
    }

    /// Parses the command line, then serves with every task on `SerialTaskExecutor.shared` and the
    /// main thread parked in `dispatchMain()`. Not `AsyncParsableCommand`: its `run` starts on
    /// Swift concurrency's global executor, and that alone wakes the idle daemon every second for
    /// the rest of its life (see `SerialTaskExecutor`).
    static func main() {
        keepFreedMemoryReturnable()
        raiseDescriptorLimit()
        // The notifications and prompts speak the session's language (LANG from systemd or D-Bus activation).
        Localization.setUp()
        let daemon: Daemon
        do { daemon = try parse() } catch { exit(withError: error) }
        SerialTaskExecutor.runMain {
            do {
                try await daemon.serve()
            } catch {
                exit(withError: error)
            }
        }
    }

    /// glibc serves blocks of 128 KiB and more with mmap, and gives them back when they are freed,
    /// but raises that threshold to the largest such block freed (up to 32 MiB): after a call
    /// directory update's buffers, blocks that size come from the heap and stay with the daemon
    /// once freed (15 MiB more after the quick bench's 400,000-entry updates, 73 MiB after the full bench's 20,000,000).
    /// Fixed thresholds keep what the daemon frees returnable, for a few mmap calls more.
    /// glibc also gives each thread that allocates an arena of its own (up to 8 per core), and an
    /// arena keeps what its thread freed in the middle of it: under the surface fuzzer's 1 MiB
    /// strings five worker-thread arenas held 35 MiB each long after. Two arenas are plenty for a
    /// daemon whose work is one queue.
    private static func keepFreedMemoryReturnable() {
        mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        mallopt(M_TRIM_THRESHOLD, 128 * 1024)
        mallopt(M_ARENA_MAX, 2)
    }

    /// Each mapped call directory keeps its file open (its intact check is an `fstat` of it), so the
    /// descriptors the daemon holds grow with the directories apps have stored, beside the bus and a
    /// pidfd for each caller being identified. The soft limit systemd gives services (1,024) is for
    /// programs that still use `select()`; nothing in the daemon does (libdbus and GLib poll), so it
    /// takes the hard limit (524,288 under systemd).
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    func serve() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = CleanLogHandler(inner: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "monkeycalld")
        // Recents, settings and call directories are the user's alone: every file made from here on is 0600, every folder 0700.
        umask(0o077)
        guard let databasePath = database ?? DataFolder.defaultPath().map({ $0 + "/monkeycall.sqlite" }) else {
            logger.critical("no folder for the user's data: neither XDG_DATA_HOME nor HOME is set to an absolute path; set one, or give --database")
            throw ExitCode(2)
        }
        let dataFolder = DataFolder(path: URL(fileURLWithPath: databasePath).deletingLastPathComponent().path,
                                    databaseName: URL(fileURLWithPath: databasePath).lastPathComponent)
        for failure in dataFolder.tighten() { logger.warning("cannot make private: \(failure)") }

        let connection: Connection
        do {
            connection = try address.map { try Connection(address: $0, queue: TelephonyActor.queue) } ?? Connection.sessionBus(queue: TelephonyActor.queue)
        } catch {
            logger.critical("cannot connect to the bus: \(error)")
            throw ExitCode(2)
        }
        var options = ServiceOptions()
        options.actionTimeout = actionTimeout
        options.ringTimeout = ringTimeout
        options.limits.incomingCallsPerSecond = incomingCallRate
        options.limits.incomingCallBurst = max(1, Int((2 * incomingCallRate).rounded(.up)))
        options.limits.registrationsPerMinute = registrationRate
        options.limits.maximumProvidersPerApp = providersPerApp
        options.limits.maximumSubscriptionsPerApp = subscriptionsPerApp
        options.argumentBytesPerSecond = max(0, argumentBytesRate)
        options.dataDirectory = dataFolder.path
        options.recentsLimit = recentsLimit
        options.pausesMedia = pauseMedia
        options.showsCallControls = callControls
        options.playsRingtone = ringtone
        options.systemBusAddress = inhibitSleep ? systemBusAddress ?? Connection.systemBusAddress : nil
        options.followsDesktopDoNotDisturb = desktopDoNotDisturb
        options.servesSystemSearch = searchProvider
        // Relative folders as the user meant them: from where the daemon was started.
        let folders = contacts.map { URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path }
        // GNOME's address books are read by a helper on the bus we are on, however it was found.
        var helperEnvironment = ProcessInfo.processInfo.environment
        helperEnvironment["DBUS_SESSION_BUS_ADDRESS"] = connection.address
        options.addressBook = addressBook ? .standard(contactFolders: folders, environment: helperEnvironment) : nil
        // libnotify and GSettings (dconf) talk over their own GDBus connections, which read the address
        // from the environment: the bus we are on, however it was found.
        setenv("DBUS_SESSION_BUS_ADDRESS", connection.address, 1)
        let notifier: Notifier? = notifications ? LibnotifyNotifier(appName: "MonkeyCall", fallbackDesktopEntry: TelephonyService.installedPhoneApp, logger: logger) : nil
        let gnome: DesktopDoNotDisturb?
        if desktopDoNotDisturb, GnomeNotificationBanners.appliesToSession(ProcessInfo.processInfo.environment) {
            gnome = GnomeNotificationBanners(logger: logger)
        } else {
            if desktopDoNotDisturb { logger.info("not a GNOME session (XDG_CURRENT_DESKTOP): not following GNOME's Do Not Disturb") }
            gnome = nil
        }
        let service = await TelephonyService(connection: connection, options: options, notifier: notifier,
                                       databasePath: databasePath, desktopDoNotDisturb: gnome, logger: logger)
        do {
            try await service.start()
        } catch let error as TelephonyService.StartError {
            logger.critical("\(error)")
            throw ExitCode(1)
        }

        let group = ServiceGroup(configuration: .init(
            // BusService throws when the bus or the name is lost: the daemon exits non-zero, and systemd restarts it.
            services: [.init(service: BusService(service: service, logger: logger), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
        logger.info("stopped")
    }
}

/// Keeps the daemon alive until it is asked to stop, loses the bus, or loses the name; then gives
/// the name back. A loss is an error exit (status 1), so that systemd's Restart=on-failure brings
/// the service back.
struct BusService: Service {
    let service: TelephonyService
    let logger: Logger

    enum Stop: Sendable {
        case asked
        case lost(String)
    }

    func run() async throws {
        let (stops, stop) = AsyncStream<Stop>.makeStream()
        service.connection.onDisconnect { _ in stop.yield(.lost("lost the connection to the bus")) }
        // NameLost comes to us directly; no match rule is needed.
        let nameLost = try await service.connection.subscribe(
            MatchRule(sender: Connection.busName, interface: Connection.busName, member: "NameLost", arg0: Telephony1.busName), local: true
        ) { _ in stop.yield(.lost("lost the name \(Telephony1.busName)")) }
        var why = Stop.asked
        await withGracefulShutdownHandler {
            for await first in stops {
                why = first
                break
            }
        } onGracefulShutdown: {
            stop.yield(.asked)
        }
        nameLost.cancel()
        switch why {
        case .asked:
            logger.info("stopping: asked to stop")
            await service.stop()
        case .lost(let what):
            logger.critical("stopping: \(what)")
            await service.stop()
            throw ExitCode(1)
        }
    }
}
