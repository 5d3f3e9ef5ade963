import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A random run of what apps and the user do to the running daemon: apps
/// register on their own connections, report calls, fulfil, fail or ignore
/// actions and leave; the user requests transactions. The daemon runs with
/// short timeouts, so actions and rings time out along the way. After every
/// step `Invariants` compares the service's account with what was heard.
final class CallModel: @unchecked Sendable {
    /// An app in the run: its provider and the actions it has not answered yet.
    final class App {
        let provider: FuzzProvider
        var inbox: [(id: String, kind: String, call: String)] = []
        /// How many of the provider's received signals were read into `inbox`.
        var read = 0
        var gone = false
        init(_ provider: FuzzProvider) { self.provider = provider }
    }

    static let actionTimeout = 0.4
    static let ringTimeout = 1.2

    let seed: UInt64
    var random: SplitMix64
    let daemon: FuzzedDaemon
    let mirror: ObjectMirror
    var apps: [App] = []
    /// Every call UUID reported or started, live or not.
    var knownCalls: [String] = []
    /// Transactions the controller was given UUIDs for, and the completions it heard (per UUID).
    var requested: Set<String> = []
    let completions = Completions()
    /// Requests through Call objects: they complete too, but their UUIDs are never returned.
    var untrackedRequests = 0
    var operations: [String: Int] = [:]
    var step = 0
    var operation = ""
    /// Every step's operation and outcome, for failure messages.
    var log: [String] = []

    init(seed: UInt64) async throws {
        self.seed = seed
        random = SplitMix64(seed: seed)
        daemon = try await FuzzedDaemon(actionTimeout: Self.actionTimeout, ringTimeout: Self.ringTimeout)
        mirror = try await ObjectMirror(daemon.controller)
        try await completions.follow(daemon.controller)
    }

    /// Names the seed and step, so that a failure can be replayed.
    var context: String { "MONKEYCALL_FUZZ_SEED=\(seed) step \(step) (\(operation))" }

    var liveApps: [App] { apps.filter { !$0.gone } }

    // MARK: Steps

    /// One random step.
    func step(_ number: Int) async throws {
        step = number
        readInboxes()
        let choice = random.pick(weighted: [
            ("register", liveApps.count < 4 ? 8 : 0), ("incoming", liveApps.isEmpty ? 0 : 14), ("start", 8), ("request", 20),
            ("call object", 5), ("perform", liveApps.contains { !$0.inbox.isEmpty } ? 28 : 0), ("report", liveApps.isEmpty ? 0 : 8),
            ("leave", liveApps.isEmpty ? 0 : 3), ("wait for a timeout", 2),
        ])
        operation = choice
        operations[choice, default: 0] += 1
        switch choice {
        case "register": try await register()
        case "incoming": await reportIncoming()
        case "start": await start()
        case "request": await request()
        case "call object": await callObject()
        case "perform": await perform()
        case "report": await report()
        case "leave": try await leave(random.pick(liveApps)!)
        default: await waitForChange()
        }
        log.append("step \(number): \(operation)")
    }

    /// The steps that mention any of `words` (call UUIDs, say), for failure messages.
    func steps(mentioning words: [String]) -> String {
        log.filter { line in words.contains { line.contains($0) } }.suffix(30).joined(separator: "\n")
    }

    private func register() async throws {
        let types = random.chance(0.7) ? ["generic", "phone-number", "email-address"] : ["generic"]
        let configuration: [String: DBusValue] = [
            "SupportsVideo": .bool(random.chance(0.5)), "MaximumCallGroups": .uint32(UInt32.random(in: 1...3, using: &random)),
            "SupportedHandleTypes": .array(element: "s", types.map { .string($0) }),
        ]
        apps.append(App(try await FuzzProvider(daemon, name: "App\(apps.count)", configuration: configuration)))
        operation += " App\(apps.count - 1)"
    }

    private func reportIncoming() async {
        let app = random.pick(liveApps)!
        // Now and then a UUID that is already in use.
        let uuid = random.chance(0.05) && !knownCalls.isEmpty ? random.pick(knownCalls)! : newUUID()
        knownCalls.append(uuid)
        let update: [String: DBusValue] = ["Handle": .string(random.pick(["alice", "bob", "+14085555555"])!),
                                           "SupportsHolding": .bool(random.chance(0.8)), "SupportsGrouping": .bool(random.chance(0.5))]
        operation += " \(name(app)) \(uuid)"
        expectProper(await provider(app, "ReportNewIncomingCall", [.string(uuid), .vardict(update)]))
    }

    private func start() async {
        let uuid = newUUID()
        knownCalls.append(uuid)
        // Usually a live app, now and then one that is gone.
        let target = random.chance(0.9) ? random.pick(liveApps) : random.pick(apps)
        var options: [String: DBusValue] = ["CallUUID": .string(uuid), "Video": .bool(random.chance(0.2))]
        if let target { options["Provider"] = .objectPath(target.provider.path) }
        operation += " \(target.map(name) ?? "no provider") \(uuid)"
        let outcome = await controller("StartCall", [.string(random.pick(["alice", "carol"])!), .vardict(options)])
        expectProper(outcome)
        if case .string(let transaction)? = outcome.values?.last { requested.insert(transaction) }
    }

    /// A transaction on a call: usually a live one, now and then one that ended or never was.
    private func request() async {
        let call = pickCall()
        let kind = random.pick(["answer", "end", "set-held", "set-muted", "set-group", "play-dtmf"])!
        operation += " \(kind) \(call)"
        let outcome: Outcome
        if random.chance(0.5) {
            var args: [String: DBusValue] = ["CallUUID": .string(call)]
            switch kind {
            case "set-held": args["OnHold"] = .bool(random.chance(0.6))
            case "set-muted": args["Muted"] = .bool(random.chance(0.6))
            case "set-group": args["GroupWith"] = .string(random.chance(0.3) ? "" : pickCall())
            case "play-dtmf": args["Digits"] = .string("12#")
            default: break
            }
            var actions: [DBusValue] = [.structure([.string(kind), .vardict(args)])]
            if random.chance(0.15) { actions.append(.structure([.string("set-muted"), .vardict(["CallUUID": .string(pickCall()), "Muted": .bool(false)])])) }
            outcome = await controller("RequestTransaction", [.array(element: "(sa{sv})", actions)])
        } else {
            outcome = switch kind {
            case "answer": await controller("AnswerCall", [.string(call)])
            case "end": await controller("EndCall", [.string(call)])
            case "set-held": await controller("SetHeld", [.string(call), .bool(random.chance(0.6))])
            case "set-muted": await controller("SetMuted", [.string(call), .bool(random.chance(0.6))])
            case "set-group": await controller("SetGroup", [.string(call), .string(random.chance(0.3) ? "" : pickCall())])
            default: await controller("PlayDTMF", [.string(call), .string("1"), .string("single-tone")])
            }
        }
        expectProper(outcome)
        if case .string(let transaction)? = outcome.values?.first { requested.insert(transaction) }
    }

    private func callObject() async {
        let call = pickCall()
        let member = random.pick(["Answer", "End", "SetHeld", "SetMuted", "PlayDTMF"])!
        let arguments: [DBusValue] = switch member {
        case "SetHeld", "SetMuted": [.bool(random.chance(0.5))]
        case "PlayDTMF": [.string("5")]
        default: []
        }
        operation += " \(member) \(call)"
        let outcome = await daemon.send(daemon.controller, Telephony1.callPath(call), Telephony1.Call.interface, member, arguments)
        expectProper(outcome)
        if outcome.values != nil { untrackedRequests += 1 }
    }

    /// An app answers its oldest action: usually fulfils it, sometimes fails it, sometimes lets it time out.
    private func perform() async {
        let app = random.pick(liveApps.filter { !$0.inbox.isEmpty })!
        let action = app.inbox.removeFirst()
        let answer = random.pick(weighted: [("FulfillAction", 70), ("FailAction", 15), ("ignore", 15)])
        operation += " \(name(app)) \(answer) \(action.kind) \(action.call)"
        guard answer != "ignore" else { return }
        expectProper(await provider(app, answer, [.string(action.id), .vardict([:])]))
    }

    /// An app reports what happened on one of its calls without the user.
    private func report() async {
        let app = random.pick(liveApps)!
        let calls = mirror.calls.filter { $0.value["Provider"] == .objectPath(app.provider.path) }.compactMap { entry -> String? in
            if case .string(let uuid)? = entry.value["UUID"] { uuid } else { nil }
        }.sorted()
        let call = random.pick(calls) ?? newUUID()
        let member = random.pick(["ReportOutgoingCallStartedConnecting", "ReportOutgoingCallConnected", "ReportCallEnded", "ReportCallUpdated"])!
        operation += " \(name(app)) \(member) \(call)"
        let arguments: [DBusValue] = switch member {
        case "ReportCallEnded": [.string(call), .string(random.pick(["failed", "remote-ended", "unanswered", "answered-elsewhere", "declined-elsewhere"])!), .uint64(0)]
        case "ReportCallUpdated": [.string(call), .vardict(["LocalizedCallerName": .string("Updated"), "SupportsHolding": .bool(random.chance(0.5))])]
        default: [.string(call), .uint64(0)]
        }
        expectProper(await provider(app, member, arguments))
    }

    /// An app leaves, by closing its connection or invalidating its provider; waits until the service has removed it.
    func leave(_ app: App) async throws {
        let byClosing = random.chance(0.6)
        operation += " \(name(app)) \(byClosing ? "closes its connection" : "invalidates")"
        if byClosing {
            app.provider.connection.close()
        } else {
            expectProper(await provider(app, "Invalidate", []))
        }
        app.gone = true
        let path = app.provider.path
        let removed = await mirror.waitUntil(timeout: .seconds(10)) { !$0.providers.contains(path) }
        if !removed { Issue.record("\(context): provider \(path) was not removed within 10 s") }
    }

    /// Lets the clock run: waits for the next change the service announces (a timeout, usually).
    private func waitForChange() async {
        _ = await mirror.nextChange(timeout: .seconds(Self.ringTimeout + 1))
    }

    // MARK: Helpers

    private func readInboxes() {
        for app in liveApps {
            let signals = app.provider.signals.buffer.all
            for message in signals[app.read...] where message.member == "PerformAction" {
                guard let args = try? message.arguments(), args.count == 4, case .string(let id) = args[0], case .string(let kind) = args[1],
                      case .string(let call) = args[2] else { continue }
                app.inbox.append((id, kind, call))
            }
            app.read = signals.count
        }
    }

    private func pickCall() -> String {
        let live = mirror.calls.values.compactMap { props -> String? in if case .string(let uuid)? = props["UUID"] { uuid } else { nil } }.sorted()
        if random.chance(0.85), let call = random.pick(live) { return call }
        return random.pick(knownCalls) ?? newUUID()
    }

    /// A call UUID from the run's generator, so that a seed replays the same calls.
    private func newUUID() -> String { UUID(using: &random).uuidString.lowercased() }

    private func name(_ app: App) -> String { "App\(apps.firstIndex { $0 === app } ?? -1)" }

    private func controller(_ member: String, _ arguments: [DBusValue]) async -> Outcome {
        await daemon.send(daemon.controller, Telephony1.rootPath, Telephony1.CallController.interface, member, arguments)
    }

    private func provider(_ app: App, _ member: String, _ arguments: [DBusValue]) async -> Outcome {
        await daemon.send(app.provider.connection, app.provider.path, Telephony1.Provider.interface, member, arguments)
    }

    /// The model sends only well-formed input: an error must be one of the API's refusals, never InvalidArgs, AccessDenied or Failed.
    private func expectProper(_ outcome: Outcome) {
        operation += outcome.errorName.map { " → \($0.split(separator: ".").last ?? "")" } ?? " → ok"
        guard let error = outcome.error else { return }
        let allowed = APIError(rawValue: error.name) != nil || error.name == DBusError.Name.limitsExceeded || error.name == DBusError.Name.unknownObject
        if !allowed || error.name == APIError.recentsUnavailable.rawValue { Issue.record("\(context): \(error)") }
    }
}

/// TransactionCompleted as the controller hears it: how often each UUID completed.
final class Completions: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    let heard = EventBuffer<String>()
    private var subscription: Subscription?

    func follow(_ connection: Connection) async throws {
        subscription = try await connection.subscribe(MatchRule(interface: Telephony1.CallController.interface, member: "TransactionCompleted")) { [weak self] message in
            guard let self, case .string(let id)? = try? message.arguments().first else { return }
            lock.withLock { counts[id, default: 0] += 1 }
            heard.append(id)
        }
    }

    var byTransaction: [String: Int] { lock.withLock { counts } }
}

extension UUID {
    /// A version-4 UUID from `random`.
    init(using random: inout SplitMix64) {
        let (high, low) = (random.next(), random.next())
        self = withUnsafeBytes(of: (high, low)) { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], (bytes[6] & 0x0f) | 0x40, bytes[7],
                        (bytes[8] & 0x3f) | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }
}

