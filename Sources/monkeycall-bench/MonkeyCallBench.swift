import ArgumentParser
import DBusTestSupport
import Foundation

@main
struct MonkeyCallBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall-bench",
        abstract: "Measures monkeycalld on a private bus: round trips, call lifecycles and memory."
    )

    @Option(help: "Round trips of each kind, Ping and Get (default: 2000, or 200 with --quick).")
    var iterations: Int?

    @Flag(help: "Small counts, for a smoke run.")
    var quick = false

    @Option(help: "The monkeycalld to run (default: the one next to this program).")
    var daemon: String?

    @Option(name: .customLong("daemon-option"), help: ArgumentHelp("An option for the daemon, as --daemon-option=--no-pause-media (repeatable): to see what a part costs.",
                                                                  valueName: "option"))
    var daemonOptions: [String] = []

    @Flag(help: "Instead of the figures: call lifecycles for a long time, with lifecycles/s as it goes and the daemon's RSS at the start and the end.")
    var soak = false

    @Flag(help: "Instead of the figures: only whether the service queue waits on a disk (Get during a large directory Complete, calls while Recents is locked).")
    var queue = false

    @Flag(help: "Instead of the figures: only the 1-provider call lifecycles against their floor, in many short alternating rounds, and ReportNewIncomingCall → Notify against Ping and against a no-op peer that calls Notify itself, to compare builds.")
    var floor = false

    @Flag(help: "Instead of the figures: only the address book's (10,000 contacts indexed at start, incoming calls from contacts against a daemon without, idle RSS with 1,000).")
    var contacts = false

    @Flag(help: "Instead of the figures: only the system's search (GNOME Shell's and KRunner's, AddressBook.Search) over 10,000 contacts, 10,000 Recents and 100 favorites, against Ping, and what it keeps in memory.")
    var search = false

    @Flag(help: "Instead of the figures: only the ring, on a real PulseAudio server: Answer → the ringtone's stream gone against Ping, and the idle daemon's wake-ups and RSS before any ring and after.")
    var ring = false

    @Flag(help: "Instead of the figures: only the Phone app against a minimal libadwaita window under Xvfb: cold start to the first frame, idle wake-ups and RSS with the window open.")
    var phone = false

    @Option(name: .customLong("readme-table"), help: ArgumentHelp("Also writes the README's table of figures to this file (scripts/bench-table).", valueName: "path"))
    var readmeTable: String?

    @Flag(help: ArgumentHelp("Prints issue 55's figures as JSON, one a line ({\"figure\": \"lifecycle/floor\", \"value\": …, \"goal\": …, \"met\": …, …}), the report going to stderr: for a history (also with --quick, --floor, --contacts)."))
    var json = false

    @Option(help: "The build the README's table (and --json) names (a commit).")
    var build = "unnamed build"

    @Option(help: "Call lifecycles in the soak (default: 1000000), or of each kind with --floor (default: 2000).")
    var lifecycles: Int?

    @Option(help: "Providers in the soak, each with one lifecycle in flight.")
    var providers = 100

    func validate() throws {
        if let iterations, iterations < 10 { throw ValidationError("--iterations must be at least 10, one per round") }
        guard [soak, queue, floor, contacts, search, ring, phone].filter({ $0 }).count <= 1 else {
            throw ValidationError("--soak, --queue, --floor, --contacts, --search, --ring and --phone are separate runs")
        }
        guard readmeTable == nil || ![soak, queue, floor, contacts, search, ring, phone].contains(true) else { throw ValidationError("--readme-table comes from the default run") }
        guard !json || ![soak, queue, search, ring, phone].contains(true) else { throw ValidationError("--json comes from the default run, --floor or --contacts") }
        guard (lifecycles ?? 1) > 0, (1...10_000).contains(providers) else { throw ValidationError("--lifecycles must be positive, --providers 1 to 10000") }
    }

    /// How much of everything.
    struct Counts {
        var roundTrips: Int
        var lifecycles: [(providers: Int, count: Int)]
        var memoryProviders: Int
        var memoryCalls: Int
        var notifications: Int
        var historyRows: Int
        var directoryPerKind: Int
        var recordings: Int
        var idleWindow: Duration
        /// The address book: contacts in the vCard folder, rounds of calls on each daemon, calls a round.
        var contacts = 10_000
        var contactRounds: Int
        var contactCalls: Int

        init(quick: Bool, iterations: Int?) {
            roundTrips = iterations ?? (quick ? 200 : 2000)
            // The first is one provider, measured against its floor.
            lifecycles = quick ? [(1, 60), (50, 200)] : [(1, 500), (50, 2000)]
            memoryProviders = quick ? 100 : 1000
            memoryCalls = quick ? 1000 : 10_000
            notifications = quick ? 50 : 500
            historyRows = quick ? 10_000 : 100_000
            directoryPerKind = quick ? 200_000 : 10_000_000
            recordings = quick ? 200 : 2000
            idleWindow = quick ? .seconds(10) : .seconds(60)
            contactRounds = quick ? 4 : 10
            contactCalls = quick ? 25 : 50
        }
    }

    func run() async throws {
        let path = daemon ?? BuiltProducts.path("monkeycalld")
        if soak {
            // The daemon as a user runs it.
            // As a user runs it, but keeping every call in Recents: what is missing there was lost.
            let lifecycles = lifecycles ?? 1_000_000
            let recorded = lifecycles + Lifecycles.warmUp(providers)
            try await withDaemon(path, options: ["--recents-limit", "\(recorded)"] + Self.manyApps + daemonOptions) { try await Soak.run($0, providers: providers, lifecycles: lifecycles) }
            return
        }
        let counts = Counts(quick: quick, iterations: iterations)
        if contacts {
            progress("address book: \(counts.contacts) contacts indexed at start; \(counts.contactRounds) × \(counts.contactCalls) incoming calls from contacts, alternating with a daemon without; idle RSS with 1,000")
            let result = try await ContactsPhase.measure(executable: path, options: Self.unthrottled + daemonOptions,
                                                         contacts: counts.contacts, rounds: counts.contactRounds, perRound: counts.contactCalls)
            printReport("address book", daemon: path, ContactsPhase.render(result), figures: [Figure.contactsRing(result)])
            return
        }
        if search {
            let iterations = counts.roundTrips
            progress("the system's search: \(counts.contacts) contacts, 10,000 Recents, 100 favorites; \(iterations) of each search against Ping")
            let result = try await SearchPhase.measure(executable: path, options: Self.unthrottled + daemonOptions, contacts: counts.contacts,
                                                       recents: 10_000, favorites: 100, iterations: iterations)
            printReport("system search", daemon: path, SearchPhase.render(result))
            return
        }
        if ring {
            let result = try await RingPhase.measure(executable: path, options: Self.unthrottled + daemonOptions,
                                                     rounds: quick ? 20 : 100, idleWindow: counts.idleWindow)
            printReport("ring", daemon: path, RingPhase.render(result))
            return
        }
        if phone {
            let result = try await PhonePhase.measure(executable: path, options: Self.unthrottled + daemonOptions,
                                                      rounds: quick ? 3 : 10, idleWindow: counts.idleWindow)
            printReport("Phone app", daemon: path, PhonePhase.render(result))
            return
        }
        if floor {
            try await withFullRunDaemon(path, counts) { service in
                let count = lifecycles ?? 2000
                progress("call lifecycles: \(count) over 1 provider, and \(count) of the same messages with a no-op peer, in \(count / 25) rounds")
                let script = try await LifecycleFloor.record(address: service.address)
                let (single, floor) = try await LifecycleFloor.alternating(address: service.address, script: script, count: count, rounds: max(2, count / 25))
                progress("notification latency: 500 incoming calls, and 500 to a no-op peer that calls Notify itself, alternating")
                let notifications = try await NotificationLatency.measure(address: service.address, count: 500, floor: true)
                return output((Report.header("call lifecycles against their floor", daemon: commandLine(path)) + Report.renderFloor(single, floor)
                               + [""] + Report.renderNotifications(notifications)).joined(separator: "\n"),
                              figures: [Figure.lifecycle(single, floor)] + [Figure.notify(notifications)].compactMap { $0 })
            }
            return
        }
        if queue {
            try await withDaemon(path, options: Self.unthrottled + daemonOptions) { service in
                let (stall, lock) = try await measureQueue(service, counts)
                return (Report.header("service queue", daemon: path) + QueuePhase.render(stall, lock)).joined(separator: "\n")
            }
            return
        }
        try await withFullRunDaemon(path, counts) { service in
            let report = try await measure(service, counts, path: path)
            if let readmeTable { try Data((report.readmeTable(build: build) + "\n").utf8).write(to: URL(fileURLWithPath: readmeTable)) }
            return output(report.render(), figures: report.figures)
        }
    }

    /// A separate run's report: what it measured, on which machine and daemon, then its lines.
    private func printReport(_ title: String, daemon path: String, _ lines: [String], figures: [Figure] = []) {
        print(output((Report.header(title, daemon: commandLine(path)) + lines).joined(separator: "\n"), figures: figures))
    }

    /// The daemon as the reports name it: its path and the options given for it.
    private func commandLine(_ path: String) -> String { ([path] + daemonOptions).joined(separator: " ") }

    /// What goes to stdout: the report, or with `--json` the figures, one JSON object a line (the
    /// report then goes to stderr, with the progress).
    private func output(_ report: String, figures: [Figure]) -> String {
        guard json else { return report }
        FileHandle.standardError.write(Data((report + "\n").utf8))
        let date = Date().ISO8601Format()
        return figures.map { $0.json(quick: quick, build: build, at: date) }.joined(separator: "\n")
    }

    /// The bench plays many apps from one process (which the daemon counts as one app): it may
    /// register as many providers as it needs, as fast as it can (a round of the floor registers
    /// afresh). The limits stay for apps: these are options of this daemon only.
    /// Its directory phases send 20 million entries (hundreds of MiB) as that one app: its bytes of
    /// arguments a second are not bounded either (`--argument-bytes-rate`, 1 TiB/s).
    static let manyApps = ["--registration-rate", "0", "--providers-per-app", "10000", "--subscriptions-per-app", "4096",
                           "--argument-bytes-rate", "\(1 << 40)"]

    /// The daemon as the bench runs it: ringing calls outlive the 45 s ring timeout, and one app
    /// reports calls as fast as it can, since the flood guard would measure itself.
    static let unthrottled = ["--ring-timeout", "600", "--incoming-call-rate", "0"] + manyApps

    /// The daemon as the full run measures it (and `--floor`, to compare with it). Ringing calls
    /// of the memory phase must outlive the default 45 s ring timeout; one app's calls go as fast
    /// as it can make them (the flood guard would measure itself). Recents at its limit: the
    /// history fills it, and each call recorded drops the oldest.
    private func withFullRunDaemon(_ path: String, _ counts: Counts, _ body: (DaemonUnderTest) async throws -> String) async throws {
        try await withDaemon(path, options: Self.unthrottled + ["--recents-limit", "\(counts.historyRows)"] + daemonOptions, prepare: {
            progress("writing a history of \(counts.historyRows) calls")
            try RecentsPhase.prefill(dataHome: $0, rows: counts.historyRows)
        }, body)
    }

    /// Starts the daemon on a private bus, prints what `body` reports, and
    /// stops both, also on failure or SIGINT.
    private func withDaemon(_ path: String, options: [String], prepare: (URL) throws -> Void = { _ in },
                            _ body: (DaemonUnderTest) async throws -> String) async throws {
        progress("starting \(path) on a private bus")
        let service: DaemonUnderTest
        do {
            service = try await DaemonUnderTest.start(executable: path, options: options, prepare: prepare)
        } catch {
            throw failure(error)
        }
        let interrupts = Interrupts.install {
            FileHandle.standardError.write(Data("monkeycall-bench: interrupted; stopping monkeycalld and the bus\n".utf8))
            service.kill()
        }
        defer { interrupts.forEach { $0.cancel() } }

        do {
            let report = try await body(service)
            await service.stop()
            print(report)
        } catch {
            if service.wasKilled { throw ExitCode(130) }
            let note = service.outputNote
            await service.stop()
            throw failure(error, note: note)
        }
    }

    private func measure(_ service: DaemonUnderTest, _ counts: Counts, path: String) async throws -> Report {
        let idle = try service.residentBytes()
        progress("idle: the daemon's threads over \(counts.idleWindow) with no call and no client")
        let idling = try await IdlePhase.measure(service, settle: .seconds(6), window: counts.idleWindow)

        progress("round trips: \(counts.roundTrips) Ping and \(counts.roundTrips) Get")
        let roundTrips = try await RoundTrips.measure(address: service.address, iterations: counts.roundTrips)

        let oneByOne = counts.lifecycles[0].count
        progress("call lifecycles: \(oneByOne) over 1 provider, and \(oneByOne) of the same messages with a no-op peer (the floor)")
        let script = try await LifecycleFloor.record(address: service.address)
        let (single, floor) = try await LifecycleFloor.alternating(address: service.address, script: script, count: oneByOne, rounds: max(2, oneByOne / 25))
        var lifecycles = [single]
        for (providers, count) in counts.lifecycles.dropFirst() {
            progress("call lifecycles: \(count) over \(providers) provider\(providers == 1 ? "" : "s")")
            lifecycles.append(try await Lifecycles.measure(address: service.address, providerCount: providers, count: count))
        }

        progress("call lifecycles: \(oneByOne) over 1 provider with 16 subscribers, \(oneByOne) with none, and \(oneByOne) from a no-op peer with the same copies to 16, in alternating rounds")
        // 16: the most subscribed connections one app may have.
        let subscribers = try await SubscriberCost.measure(address: service.address, script: script, count: oneByOne, subscribers: 16,
                                                           rounds: max(4, oneByOne / 25))

        progress("notification latency: \(counts.notifications) incoming calls, and \(counts.notifications) to a no-op peer that calls Notify itself, alternating")
        let notifications = try await NotificationLatency.measure(address: service.address, count: counts.notifications, floor: true)

        progress("recents: List(50) over \(counts.historyRows) rows; \(counts.recordings) calls recorded")
        let recents = try await RecentsPhase.measure(address: service.address, rows: counts.historyRows, iterations: min(counts.roundTrips, 1000),
                                                     recordings: counts.recordings)

        progress("call directory: \(counts.directoryPerKind) blocking + \(counts.directoryPerKind) identification entries")
        let directory = try await DirectoryPhase.measure(service, executable: path, perKind: counts.directoryPerKind,
                                                         iterations: min(counts.roundTrips, 1000))

        let (stall, lock) = try await measureQueue(service, counts)

        progress("idle again: the daemon's threads over \(counts.idleWindow) once the calls have ended")
        let idleAfterCalls = try await IdlePhase.measure(service, settle: .seconds(6), window: counts.idleWindow)

        progress("memory: \(counts.memoryProviders) providers, \(counts.memoryCalls) ringing calls")
        let memory = try await Memory.measure(service, idle: idle, providers: counts.memoryProviders, calls: counts.memoryCalls)

        progress("address book: \(counts.contacts) contacts indexed at start; \(counts.contactRounds) × \(counts.contactCalls) incoming calls from contacts, alternating with a daemon without; idle RSS with 1,000")
        let contacts = try await ContactsPhase.measure(executable: path, options: Self.unthrottled + daemonOptions,
                                                       contacts: counts.contacts, rounds: counts.contactRounds, perRound: counts.contactCalls)
        return Report(daemon: "\(commandLine(path)) (Swift runtime linked \(try service.swiftRuntimeLinkage()))", idle: idling, idleAfterCalls: idleAfterCalls, roundTrips: roundTrips, lifecycles: lifecycles, floor: floor, subscribers: subscribers, notifications: notifications, recents: recents, directory: directory,
                      stall: stall, lock: lock, memory: memory, contacts: contacts)
    }

    private func measureQueue(_ service: DaemonUnderTest, _ counts: Counts) async throws -> (StallResult, LockResult) {
        progress("service queue: Properties.Get while \(2 * counts.directoryPerKind) directory entries complete")
        let stall = try await QueuePhase.stall(address: service.address, perKind: counts.directoryPerKind, iterations: min(counts.roundTrips, 1000))
        progress("service queue: calls while another process holds Recents locked for 4 s")
        let lock = try await QueuePhase.lock(service)
        return (stall, lock)
    }

    private func failure(_ error: Error, note: String = "") -> ExitCode {
        FileHandle.standardError.write(Data("monkeycall-bench: failed: \(error)\(note)\n".utf8))
        return .failure
    }
}

/// Progress goes to stderr, so that stdout holds the report only.
func progress(_ line: String) {
    FileHandle.standardError.write(Data("• \(line)\n".utf8))
}

/// On SIGINT or SIGTERM, stops the daemon and the bus before exiting.
enum Interrupts {
    static func install(_ cleanup: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                cleanup()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
