import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

/// Fuzzes the whole D-Bus surface of a running monkeycalld as one app: every method and
/// property of the contract (from the typed specs), with extreme and hostile values, on the
/// caller's own live objects as well as others', many calls in flight. Run it on the host
/// and inside a Flatpak-style sandbox. Prints a summary on stderr and one JSON line on stdout.
@main
struct MonkeyCallFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall-fuzz",
        abstract: "Fuzzes every method and property of org.monkeycall.Telephony1 from one app, with many calls in flight."
    )

    @Option(help: "The bus address (default: the session bus).")
    var address: String?

    @OptionGroup var options: FuzzOptions

    func run() throws {
        guard let address = address ?? Connection.sessionBusAddress else { throw ValidationError("no bus: give --address") }
        let run = try FuzzRun(address: address, options: options)
        let result = run.execute()
        FileHandle.standardError.write(Data(run.summary(result).utf8))
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        FileHandle.standardOutput.write(Data(("MONKEYCALL-FUZZ-RESULT " + String(decoding: json, as: UTF8.self) + "\n").utf8))
        if result["daemonGone"] as? Bool == true { throw ExitCode(2) }
        if !((result["improper"] as? [String: Any]) ?? [:]).isEmpty || !((result["improperProbes"] as? [String]) ?? []).isEmpty { throw ExitCode(1) }
        if result["phoneAlive"] as? Bool == false { throw ExitCode(2) }
    }
}

extension Surface.Name: ExpressibleByArgument {}

/// What a run does, as the command line gives it: the run reads it whole.
struct FuzzOptions: ParsableArguments {
    @Option(help: "The seed of the generator.")
    var seed: UInt64 = 1

    @Option(help: "Calls to send.")
    var calls: Int = 20_000

    @Option(help: "Calls in flight at once.")
    var inFlight: Int = 64

    @Option(help: "Bus connections of this app (providers live as long as theirs).")
    var connections: Int = 2

    @Option(help: "How many of the last calls to keep, and print when the service dies.")
    var ring: Int = 512

    @Option(help: "Probe the bus with messages libdbus will not build (invalid UTF-8, nesting past 64) every this many calls; 0: never.")
    var probeEvery: Int = 5_000

    @Option(help: "A label for the result: host or the app id.")
    var caller: String = "host"

    @Flag(help: "Times only within the contract's window ([call start, now + 60 s], and 0): to look past a known trap on times, or to measure a tree that has one.")
    var timesWithinContract = false

    @Option(name: .customLong("foreign-path"), help: "Another app's object to aim at (repeatable).")
    var foreignPaths: [String] = []

    @Option(name: .customLong("foreign-call"), help: "Another app's call UUID to aim at (repeatable).")
    var foreignCalls: [String] = []

    @Option(name: .customLong("surface"), help: """
        A part of the surface to fuzz (repeatable): api (the API but AddressBook), addressbook, search (GNOME Shell's \
        SearchProvider2), runner (KRunner's krunner1), phone (the Phone app's org.freedesktop.Application, \
        org.monkeycall.Phone: it must be running). Default: api, addressbook, search and runner.
        """)
    var surfaces: [Surface.Name] = []

    var surfaceNames: Set<Surface.Name> { surfaces.isEmpty ? Surface.defaultNames : Set(surfaces) }

    func validate() throws {
        guard calls > 0, (1...4096).contains(inFlight), (1...8).contains(connections), ring > 0 else {
            throw ValidationError("--calls must be positive, --in-flight 1 to 4096, --connections 1 to 8, --ring positive")
        }
    }
}

/// One run: the connections, the pool, the generator and the loop that keeps calls in flight.
/// Used from the command's thread only: the callbacks get the pool, the recorder and `lost`
/// (each `Sendable`), never the run.
final class FuzzRun {
    let address: String
    let options: FuzzOptions
    let recorder: Recorder
    var generator: Generator
    let links: [Connection]
    private var subscriptions: [Subscription] = []
    private var probes: [String: Int] = [:]
    /// Probes of the surfaces beyond the API answered improperly.
    private var improperProbes: [String] = []
    /// The indexes of the connections that closed, from their disconnect handlers.
    private let lost = LockedBox<[Int]>([])
    /// The live objects the calls aim at, which replies and signals keep up to date: the
    /// generator's own, so that there is one pool.
    var pool: Pool { generator.pool }

    static let replyTimeout: Duration = .seconds(25)

    init(address: String, options: FuzzOptions) throws {
        self.address = address
        self.options = options
        let pool = Pool(foreignPaths: try options.foreignPaths.map { try ObjectPath($0) }, foreignCalls: options.foreignCalls)
        recorder = Recorder(ringSize: options.ring)
        links = try (0..<options.connections).map { _ in try Connection(address: address) }
        generator = Generator(seed: options.seed, surface: Surface(options.surfaceNames), pool: pool, connections: options.connections, host: options.caller == "host")
        generator.timesWithinContract = options.timesWithinContract
        generator.maker.boundedUInt64 = options.timesWithinContract
        try subscribe()
    }

    /// The actions the service asks of this app's providers, objects appearing and going, and the service's name.
    private func subscribe() throws {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedBox<Error?>(nil)
        let subscribed = LockedBox<[Subscription]>([])
        let pool = self.pool, recorder = self.recorder, lost = self.lost, surfaceNames = options.surfaceNames
        Task { [links] in
            do {
                for (index, link) in links.enumerated() {
                    var made: [Subscription] = []
                    made.append(try await link.subscribe(MatchRule(interface: Telephony1.Provider.interface, member: "PerformAction")) { message in
                        guard let args = try? message.arguments(), args.count == 4, case .string(let id) = args[0], case .string(let kind) = args[1],
                              case .string(let call) = args[2] else { return }
                        pool.addAction(Pool.Action(uuid: id, kind: kind, call: call))
                        // An outgoing call's start: the call is this app's.
                        if kind == "start" { pool.addCall(call, provider: message.path, outgoing: true) }
                    })
                    made.append(try await link.subscribe(MatchRule(interface: Telephony1.Provider.interface, member: "TimedOutPerformingAction")) { message in
                        if case .string(let id)? = try? message.arguments().first { pool.removeAction(id) }
                    })
                    made.append(try await link.subscribe(MatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")) { message in
                        guard case .objectPath(let path)? = try? message.arguments().first else { return }
                        if Telephony1.providerID(from: path) != nil { pool.removeProvider(path) } else { pool.removeCall(path: path) }
                    })
                    made.append(try await link.subscribe(MatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")) { message in
                        guard case .objectPath(let path)? = try? message.arguments().first else { return }
                        pool.addForeign(path: path)
                    })
                    if index == 0 {
                        made.append(try await link.subscribe(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                                        member: "NameOwnerChanged", arg0: Telephony1.busName)) { message in
                            if case .string(let owner)? = try? message.arguments().last, owner.isEmpty { recorder.daemonGone() }
                        })
                        if surfaceNames.contains(.phone) {
                            made.append(try await link.subscribe(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                                            member: "NameOwnerChanged", arg0: PhoneApp.appID)) { message in
                                if case .string(let owner)? = try? message.arguments().last, owner.isEmpty { recorder.phoneGone() }
                            })
                        }
                    }
                    link.onDisconnect { _ in
                        lost.update { $0.append(index) }
                        pool.removeConnection(index)
                    }
                    subscribed.update { $0 += made }
                }
            } catch {
                failure.value = error
            }
            done.signal()
        }
        done.wait()
        subscriptions = subscribed.value
        if let error = failure.value { throw error }
    }

    /// Sends the calls, `inFlight` at a time; returns the result.
    func execute() -> [String: Any] {
        let calls = options.calls, inFlight = options.inFlight, probeEvery = options.probeEvery
        let started = Date()
        let slots = DispatchSemaphore(value: inFlight)
        var sent = 0
        var refused = 0
        let pool = self.pool, recorder = self.recorder
        probe()
        while sent < calls && !recorder.isDaemonGone {
            slots.wait()
            if probeEvery > 0 && sent > 0 && sent % probeEvery == 0 { probe() }
            let call = generator.next()
            sent += 1
            let number = recorder.sending(call)
            let message: Message
            do {
                message = try Message.methodCall(destination: call.destination, path: call.path, interface: call.interface, member: call.member)
                try message.append(call.arguments)
            } catch {
                // libdbus would not build it: nothing was sent.
                refused += 1
                recorder.answered(number, call, "not sent: \(DBusError(error).name)", message: DBusError(error).message)
                slots.signal()
                continue
            }
            let sandboxed = options.caller != "host"
            links[call.connection].send(call: message, timeout: Self.replyTimeout) { result in
                switch result {
                case .success(let reply):
                    // What the user's address book holds is the host's: a sandboxed app gets none of it.
                    if sandboxed && call.isHostOnly {
                        recorder.answered(number, call, Self.sandboxLeak,
                                          message: "answered " + ((try? reply.arguments()) ?? []).map { Recorder.describe($0) }.joined(separator: ", "))
                        break
                    }
                    recorder.answered(number, call, "reply")
                    Self.apply(call, reply: (try? reply.arguments()) ?? [], to: pool)
                case .failure(let error):
                    let error = DBusError(error)
                    recorder.answered(number, call, error.name, message: error.message)
                    Self.apply(call, error: error.name, to: pool)
                }
                slots.signal()
            }
        }
        // Every call answered (each has its timeout).
        for _ in 0..<inFlight { slots.wait() }
        // libdispatch traps when a semaphore goes with less than it started with.
        for _ in 0..<inFlight { slots.signal() }
        let seconds = Date().timeIntervalSince(started)
        let alive = !recorder.isDaemonGone && ping()
        let phoneAlive = options.surfaceNames.contains(.phone) ? !recorder.isPhoneGone && ping(PhoneApp.appID, PhoneApp.objectPath) : nil
        return result(sent: sent, refused: refused, seconds: seconds, alive: alive, phoneAlive: phoneAlive)
    }

    /// The outcome of a reply to a sandboxed app on AddressBook, GNOME Shell's or KRunner's
    /// interface: never proper (the contract answers it AccessDenied).
    static let sandboxLeak = "reply to a sandboxed app on a host-only surface"

    // MARK: The pool from replies

    static func apply(_ call: FuzzCall, reply: [DBusValue], to pool: Pool) {
        switch call.effect {
        case .registered(let connection):
            if case .objectPath(let path)? = reply.first { pool.addProvider(path, connection: connection) }
        case .reportedIncoming(let uuid, let provider): pool.addCall(uuid, provider: provider, outgoing: false)
        case .startedCall(let provider):
            if case .string(let uuid)? = reply.first { pool.addCall(uuid, provider: provider, outgoing: true) }
        case .endedCall(let uuid): pool.removeCall(uuid)
        case .spentAction(let uuid): pool.removeAction(uuid)
        case .invalidated(let provider): pool.removeProvider(provider)
        case .beganUpdate(let provider):
            if case .objectPath(let update)? = reply.first { pool.addUpdate(update, provider: provider) }
        case .closedUpdate(let update): pool.removeUpdate(update)
        case .addedFavorite:
            if case .uint64(let id)? = reply.first { pool.addFavorite(id) }
        case .removedFavorite(let id): pool.removeFavorite(id)
        case .listedRecents:
            guard case .array(_, let entries)? = reply.first else { return }
            pool.setRecents(entries.compactMap { if case .uint64(let id)? = $0.vardict?["Id"]?.unwrappedVariant { id } else { nil } })
        case .listedObjects:
            guard case .dictionary(_, _, let objects)? = reply.first else { return }
            for (key, _) in objects {
                if case .objectPath(let path) = key { pool.addForeign(path: path) }
            }
        case .searchResults:
            guard case .array(_, let ids)? = reply.first else { return }
            pool.addResultIDs(ids.compactMap { if case .string(let id) = $0 { id } else { nil } })
        case .runnerMatches:
            guard case .array(_, let matches)? = reply.first else { return }
            pool.addResultIDs(matches.compactMap { if case .structure(let fields) = $0, case .string(let id)? = fields.first { id } else { nil } })
        case .contacts:
            guard case .array(_, let contacts)? = reply.first else { return }
            var texts: [String] = []
            for contact in contacts {
                guard let entries = contact.vardict else { continue }
                if case .string(let name)? = entries["Name"]?.unwrappedVariant { texts.append(name) }
                if case .array(_, let numbers)? = entries["Numbers"]?.unwrappedVariant {
                    for case .structure(let pair) in numbers { if case .string(let number)? = pair.last { texts.append(number) } }
                }
            }
            pool.addQueries(texts)
        case .none:
            break
        }
        // Another app's call seen through the ObjectManager: its UUID from the path.
        if call.member == "GetManagedObjects", case .dictionary(_, _, let objects)? = reply.first {
            for (key, value) in objects {
                guard case .objectPath(let path) = key, path.rawValue.hasPrefix(Telephony1.callRoot.rawValue + "/"),
                      case .uuid(let uuid)? = value.callUUID else { continue }
                pool.addForeign(call: uuid)
            }
        }
    }

    static func apply(_ call: FuzzCall, error: String, to pool: Pool) {
        switch (call.effect, error) {
        case (.spentAction(let uuid), APIError.unknownAction.rawValue): pool.removeAction(uuid)
        case (.endedCall(let uuid), APIError.unknownCallUUID.rawValue): pool.removeCall(uuid)
        default: break
        }
        guard error == DBusError.Name.unknownObject || error == DBusError.Name.accessDenied else { return }
        // A pooled object that is gone (or was never ours to use).
        if Telephony1.providerID(from: call.path) != nil, !call.path.rawValue.hasSuffix("/DirectoryUpdate") {
            if error == DBusError.Name.unknownObject { pool.removeProvider(call.path) }
        } else if call.path.rawValue.hasSuffix("/DirectoryUpdate") {
            pool.removeUpdate(call.path)
        } else if error == DBusError.Name.unknownObject {
            pool.removeCall(path: call.path)
        }
    }

    // MARK: Probes: messages libdbus will not build

    /// The probes of each part of the surface fuzzed.
    private func probe() {
        let surfaces = options.surfaceNames
        if surfaces.contains(.api) { probeAPI() }
        if surfaces.contains(where: { $0 != .api }) { probeNewSurfaces(surfaces) }
    }

    /// Big first messages on connections of their own to AddressBook, GNOME Shell's and KRunner's
    /// interfaces (a 16 MiB query or term, 200,000 terms), and a 1 MiB number to the Phone app's
    /// `app.call`: each answered at once, by a proper name (a sandboxed app: never a reply from the
    /// host-only ones). Outcomes not so go to `improperProbes`.
    private func probeNewSurfaces(_ surfaces: Set<Surface.Name>) {
        let huge = String(repeating: "9", count: 16 << 20)
        var probes: [(Surface.Name, String, String, ObjectPath, String, String, [DBusValue])] = [
            (.addressbook, "16 MiB query to AddressBook.Search", Telephony1.busName, Telephony1.rootPath, Telephony1.AddressBook.interface, "Search",
             [.string(huge), .uint32(0)]),
            (.search, "16 MiB term to GetInitialResultSet", Telephony1.busName, Telephony1.searchPath, Desktop.SearchProvider2.interface,
             "GetInitialResultSet", [.array(element: "s", [.string(huge)])]),
            (.search, "200,000 terms to GetInitialResultSet", Telephony1.busName, Telephony1.searchPath, Desktop.SearchProvider2.interface,
             "GetInitialResultSet", [.array(element: "s", Array(repeating: .string("a"), count: 200_000))]),
            (.runner, "16 MiB query to Match", Telephony1.busName, Telephony1.runnerPath, Desktop.KRunner1.interface, "Match", [.string(huge)]),
        ]
        probes.append((.phone, "1 MiB number to the Phone app's app.call", PhoneApp.appID, PhoneApp.objectPath, Desktop.Application.interface,
                       "ActivateAction", [.string(PhoneApp.Action.call), .array(element: "v", [.variant(.string(String(huge.prefix(1 << 20))))]), .vardict([:])]))
        for (surface, name, destination, path, interface, member, arguments) in probes where surfaces.contains(surface) {
            let outcome = callOutcome(on: nil, interface, member, arguments, destination: destination, path: path)
            self.probes["\(name): \(outcome)", default: 0] += 1
            let leak = options.caller != "host" && surface.isHostOnly && outcome == "reply"
            if !Recorder.isProper(outcome) || leak { improperProbes.append("\(name) as \(options.caller): \(outcome)") }
        }
    }

    /// A string that is not UTF-8, through a socket of our own; a message nested past the bus's
    /// limit, on a connection of its own. Either way the sender is dropped, never the service.
    private func probeAPI() {
        let invalid: [[UInt8]] = [[0x41, 0xFF, 0xFE], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], Array(repeating: 0xFF, count: 4096)]
        let bytes = invalid[probes.values.reduce(0, +) % invalid.count]
        let (outcome, detail) = RawWire.sendString(bytes: bytes, address: address, destination: Telephony1.busName, path: Telephony1.rootPath.rawValue,
                                                   interface: Telephony1.CallDirectory.interface, member: "Identify")
        probes["malformed UTF-8: \(outcome.rawValue)\(detail.isEmpty ? "" : " \(detail)")", default: 0] += 1

        guard let throwaway = try? Connection(address: address) else {
            probes["too deep: could not connect", default: 0] += 1
            return
        }
        defer { throwaway.close() }
        var deep: DBusValue = .string("x")
        for _ in 0..<70 { deep = .variant(deep) }
        probes["70 nested variants: \(callOutcome(on: throwaway, Telephony1.Manager.interface, "RegisterProvider", [.vardict(["Name": deep])]))", default: 0] += 1

        // Big messages, as first messages of a new connection (issue 39): a dictionary of 200,000
        // unknown keys (about 5 MB) and a string of 16 MiB. Both must be refused at once, by name.
        let keys = Dictionary(uniqueKeysWithValues: (0..<200_000).map { ("k\($0)", DBusValue.variant(.bool(true))) })
        probes["200,000-key a{sv}: \(callOutcome(on: nil, Telephony1.Manager.interface, "RegisterProvider", [.vardict(keys)]))", default: 0] += 1
        probes["16 MiB string: \(callOutcome(on: nil, Telephony1.CallDirectory.interface, "Identify", [.string(String(repeating: "9", count: 16 << 20))]))", default: 0] += 1
        subscriberFlood()
    }

    /// 24 connections of this app subscribe and never read: 16 are let in, the rest refused
    /// with LimitsExceeded; the service drops those who never read. Counted by outcome.
    private func subscriberFlood() {
        let flood = (0..<24).compactMap { _ in try? Connection(address: address) }
        defer { flood.forEach { $0.close() } }
        var outcomes: [String: Int] = [:]
        for connection in flood { outcomes[callOutcome(on: connection, Telephony1.Manager.interface, "Subscribe", []), default: 0] += 1 }
        let said = outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        probes["24 subscribers at once: \(said)", default: 0] += 1
    }

    /// Sends one call on `connection` (a new one when nil) and waits for its outcome: "reply",
    /// the error's name, "dropped by the bus", or why it could not be built.
    private func callOutcome(on given: Connection?, _ interface: String, _ member: String, _ arguments: [DBusValue],
                             destination: String = Telephony1.busName, path: ObjectPath = Telephony1.rootPath) -> String {
        guard let connection = given ?? (try? Connection(address: address)) else { return "could not connect" }
        defer { if given == nil { connection.close() } }
        do {
            let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member)
            try message.append(arguments)
            let semaphore = DispatchSemaphore(value: 0)
            let box = LockedBox("")
            connection.send(call: message, timeout: Self.replyTimeout) { result in
                switch result {
                case .success: box.value = "reply"
                case .failure(let error): box.value = DBusError(error).name
                }
                semaphore.signal()
            }
            semaphore.wait()
            return box.value == DBusError.Name.disconnected ? "dropped by the bus" : box.value
        } catch {
            return "not built: \(DBusError(error).name)"
        }
    }

    /// The service (or `destination`) answers Ping.
    private func ping(_ destination: String = Telephony1.busName, _ path: ObjectPath = Telephony1.rootPath) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let box = LockedBox(false)
        guard let message = try? Message.methodCall(destination: destination, path: path, interface: "org.freedesktop.DBus.Peer",
                                                    member: "Ping"), let link = links.first(where: { $0.isConnected }) ?? (try? Connection(address: address)) else { return false }
        link.send(call: message, timeout: .seconds(20)) { result in
            if case .success = result { box.value = true }
            semaphore.signal()
        }
        semaphore.wait()
        return box.value
    }

    // MARK: Results

    private func result(sent: Int, refused: Int, seconds: Double, alive: Bool, phoneAlive: Bool?) -> [String: Any] {
        let byName = recorder.byName
        let improper = recorder.improper
        var result: [String: Any] = [
            "surfaces": options.surfaceNames.sorted().map(\.rawValue), "bySurface": recorder.bySurface, "improperProbes": improperProbes,
            "caller": options.caller, "calls": sent, "answered": recorder.total, "notSent": refused, "seconds": (seconds * 100).rounded() / 100,
            "callsPerSecond": Int(Double(sent) / max(seconds, 0.001)), "outcomes": byName, "improper": improper,
            "improperExamples": recorder.improperExamples, "daemonGone": recorder.daemonGoneAfter != nil, "alive": alive,
            "probes": probes, "slowest": recorder.slowest(8), "lostConnections": lost.value,
            "pool": ["providers": pool.counts.providers, "calls": pool.counts.calls, "actions": pool.counts.actions, "updates": pool.counts.updates],
        ]
        if let phoneAlive { result["phoneAlive"] = phoneAlive }
        if let after = recorder.phoneGoneAfter {
            result["phoneGoneAfterCalls"] = after
            result["phoneLastCalls"] = recorder.lastCalls.filter { $0.call.destination == PhoneApp.appID }.suffix(32)
                .map { "#\($0.number) \(Recorder.describe($0.call)) → \($0.outcome ?? "no answer")" }
        }
        if let after = recorder.daemonGoneAfter {
            result["daemonGoneAfterCalls"] = after
            let last = recorder.lastCalls
            // The service died holding these: it had them and never answered.
            let unanswered = last.filter { $0.outcome == DBusError.Name.noReply || $0.outcome == nil }
            // Work it finishes after replying (a Recents write) dies later: the calls it took,
            // with an extreme value (a time past 2^63, a huge string), are suspects too.
            let extreme = last.filter { $0.outcome == "reply" && Recorder.isExtreme($0.call) }
            result["unanswered"] = unanswered.map { "#\($0.number) \(Recorder.describe($0.call))" }
            result["suspects"] = (extreme.reversed() + unanswered).map { "#\($0.number) \(Recorder.describe($0.call)) → \($0.outcome ?? "no answer")" }
            result["lastCalls"] = last.map { "#\($0.number) \(Recorder.describe($0.call)) → \($0.outcome ?? "no answer")" }
        }
        return result
    }

    func summary(_ result: [String: Any]) -> String {
        var lines = ["monkeycall-fuzz (\(options.caller)): \(result["calls"]!) calls in \(result["seconds"]!) s (\(result["callsPerSecond"]!)/s), daemon \(result["daemonGone"] as? Bool == true ? "GONE" : "alive")"]
        let outcomes = (result["outcomes"] as? [String: Int] ?? [:]).sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        lines += outcomes.map { "  \($0.value)\t\($0.key)" }
        let bySurface = result["bySurface"] as? [String: [String: Int]] ?? [:]
        if bySurface.count > 1 || options.surfaceNames != Surface.defaultNames {
            for (surface, counts) in bySurface.sorted(by: { $0.key < $1.key }) {
                let said = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.value) \($0.key.replacing("org.freedesktop.DBus.Error.", with: ""))" }
                lines.append("  \(surface): \(counts.values.reduce(0, +)) calls: \(said.joined(separator: ", "))")
            }
        }
        if let phoneAlive = result["phoneAlive"] as? Bool { lines.append("  the Phone app \(phoneAlive ? "alive" : "GONE")") }
        lines += (result["improperProbes"] as? [String] ?? []).map { "  improper probe: \($0)" }
        lines += (result["slowest"] as? [String] ?? []).map { "  slow: \($0)" }
        lines += (result["probes"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map { "  probe \($0.value)\t\($0.key)" }
        if let suspects = result["suspects"] as? [String] {
            lines.append("the service died after \(result["daemonGoneAfterCalls"]!) calls; suspects (extreme values it accepted, latest first, then the calls it never answered):")
            lines += suspects.map { "  \($0)" }
            lines.append("the last calls sent:")
            lines += (result["lastCalls"] as? [String] ?? []).map { "  \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A value shared with a callback.
final class LockedBox<T: Sendable>: Sendable {
    private let stored: Mutex<T>
    init(_ value: T) { stored = Mutex(value) }
    var value: T {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
    /// Changes the value in place, under the lock.
    func update(_ change: (inout T) -> Void) { stored.withLock { change(&$0) } }
}

private enum CallUUIDValue { case uuid(String) }

extension DBusValue {
    /// The `UUID` property in a GetManagedObjects entry of a call: `{interface: {UUID: <s>}}`.
    fileprivate var callUUID: CallUUIDValue? {
        guard case .dictionary(_, _, let interfaces) = self else { return nil }
        for (_, properties) in interfaces {
            if case .string(let uuid)? = properties.vardict?["UUID"]?.unwrappedVariant { return .uuid(uuid) }
        }
        return nil
    }
}
