import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

/// The messages of one call lifecycle as the daemon exchanged them, step by
/// step: the reply to each request and the signals it sent while handling it.
struct LifecycleScript: Sendable {
    struct Emitted: Sendable {
        let path: ObjectPath
        let interface: String
        let member: String
        let arguments: [DBusValue]
        /// Sent to the app that made the request rather than broadcast.
        let unicast: Bool
    }

    struct Step: Sendable {
        let reply: [DBusValue]
        let signals: [Emitted]
        /// The copies a connection that only called `Manager.Subscribe` got (an observer such as
        /// `monkeycall watch`): each subscriber gets one of each.
        let subscriberSignals: [Emitted]
    }

    let report: Step
    let answer: Step
    let fulfilAnswer: Step
    let end: Step
    let fulfilEnd: Step
    var steps: [Step] { [report, answer, fulfilAnswer, end, fulfilEnd] }
    var signalCount: Int { steps.reduce(0) { $0 + $1.signals.count } }
    var subscriberSignalCount: Int { steps.reduce(0) { $0 + $1.subscriberSignals.count } }
    var signalNames: [String] { Self.names(steps.flatMap(\.signals)) }
    var subscriberSignalNames: [String] { Self.names(steps.flatMap(\.subscriberSignals)) }

    private static func names(_ signals: [Emitted]) -> [String] {
        var counts: [String: Int] = [:]
        for signal in signals { counts[signal.member, default: 0] += 1 }
        return counts.sorted { $0.key < $1.key }.map { $0.value == 1 ? $0.key : "\($0.key) × \($0.value)" }
    }
}

struct FloorResult {
    let script: LifecycleScript
    let count: Int
    let elapsed: Duration
    var microsecondsEach: Double { elapsed.microseconds / Double(count) }
}

/// What a call lifecycle costs whoever serves it: the same messages (the
/// report, the answer, the actions, the signals, the end) exchanged with a
/// peer on the same bus that does nothing but send them. The script is
/// recorded from the daemon in the same run, so the floor follows what the
/// daemon sends.
enum LifecycleFloor {
    /// One lifecycle against the daemon on a connection that is both the app and the
    /// controller, recording what the daemon sends for each step. After each
    /// request a Ping to the daemon comes back behind every signal it sent
    /// while handling it (one sender, one receiver: the bus keeps the order). A second connection,
    /// subscribed and nothing else, records the copies every subscriber gets, the same way.
    static func record(address: String) async throws -> LifecycleScript {
        let connection = try Connection(address: address)
        defer { connection.close() }
        let provider = try await connection.registerProvider("floor-recording")
        let received = SignalLog()
        let daemon = try await connection.nameOwner(Telephony1.busName) ?? Telephony1.busName
        let subscription = try await connection.subscribe(MatchRule(sender: daemon)) { received.append($0) }
        defer { subscription.cancel() }
        // As app, controller and observer at once: everything the daemon sends for a lifecycle.
        try await connection.subscribeToTelephony()
        // A subscriber and nothing else: what each of the subscribers of SubscriberCost gets.
        let observer = try Connection(address: address)
        defer { observer.close() }
        let copies = SignalLog()
        let observed = try await observer.subscribe(MatchRule(sender: daemon)) { copies.append($0) }
        defer { observed.cancel() }
        try await observer.subscribeToTelephony()

        let uuid = UUID().uuidString.lowercased()
        // What names this call: signals of the calls before it (Recents entries written late) are not its own.
        var names = [uuid, Telephony1.callPath(uuid).rawValue, provider.rawValue]
        func ours(_ message: Message) -> LifecycleScript.Emitted? {
            let arguments = (try? message.arguments()) ?? []
            let text = "\(message.path?.rawValue ?? "") \(arguments)"
            guard message.destination != nil || names.contains(where: { text.contains($0) }) else { return nil }
            return LifecycleScript.Emitted(path: message.path ?? Telephony1.rootPath, interface: message.interface ?? "", member: message.member ?? "",
                                           arguments: arguments, unicast: message.destination != nil)
        }
        func step(_ request: () async throws -> [DBusValue]) async throws -> LifecycleScript.Step {
            let reply = try await request()
            names += reply.compactMap { if case .string(let transaction) = $0 { transaction } else { nil } }
            try await connection.ping(Telephony1.busName)
            // The copies went out with the signals above, before their reply: behind them on the observer's stream too.
            try await observer.ping(Telephony1.busName)
            return LifecycleScript.Step(reply: reply, signals: received.take().compactMap(ours),
                                        subscriberSignals: copies.take().filter { $0.destination != nil }.compactMap(ours))
        }
        func action(_ kind: String, in step: LifecycleScript.Step) throws -> String {
            for signal in step.signals where signal.interface == Telephony1.Provider.performAction.interface
                && signal.member == Telephony1.Provider.performAction.name {
                if signal.arguments.count == 4, case .string(let id) = signal.arguments[0], signal.arguments[1] == .string(kind) { return id }
            }
            throw BenchError("recording the lifecycle floor: the daemon sent no \(kind) action")
        }

        let report = try await step {
            [try await connection.telephony(Telephony1.Provider.reportNewIncomingCall, try UUID.bench(uuid), CallUpdate(handle: Handle(value: "floor")), at: provider).dbusValue]
        }
        let answer = try await step { [try await connection.telephony(Telephony1.CallController.answerCall, uuid).dbusValue] }
        let fulfilAnswer = try await step {
            try await connection.telephony(Telephony1.Provider.fulfillAction, try UUID.bench(try action(ActionName.answer.rawValue, in: answer)), [:], at: provider)
            return []
        }
        let end = try await step { [try await connection.telephony(Telephony1.CallController.endCall, uuid).dbusValue] }
        var fulfilEnd = try await step {
            try await connection.telephony(Telephony1.Provider.fulfillAction, try UUID.bench(try action("end", in: end)), [:], at: provider)
            return []
        }
        // The call's Recents entry is announced once it is written, off the service's queue: wait for it (5 s at most).
        let entryAdded = Telephony1.Recents.entryAdded
        let deadline = ContinuousClock.now + .seconds(5)
        var late: [LifecycleScript.Emitted] = [], lateCopies: [LifecycleScript.Emitted] = []
        func announced(_ signals: [LifecycleScript.Emitted]) -> Bool { signals.contains { $0.member == entryAdded.name } }
        while !(announced(fulfilEnd.signals + late) && announced(fulfilEnd.subscriberSignals + lateCopies)) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            late += received.take().compactMap(ours)
            lateCopies += copies.take().filter { $0.destination != nil }.compactMap(ours)
        }
        fulfilEnd = LifecycleScript.Step(reply: fulfilEnd.reply, signals: fulfilEnd.signals + late,
                                         subscriberSignals: fulfilEnd.subscriberSignals + lateCopies)
        return LifecycleScript(report: report, answer: answer, fulfilAnswer: fulfilAnswer, end: end, fulfilEnd: fulfilEnd)
    }

    /// One provider's lifecycles against the daemon and against the floor, `count` of each, in
    /// alternating rounds, so that the machine's noise (it is shared) falls on both alike.
    /// Short rounds (25 lifecycles): with 4 rounds of 125, one slow second of the machine's moved
    /// the ratio by a third.
    static func alternating(address: String, script: LifecycleScript, count: Int, rounds: Int) async throws -> (LifecycleResult, FloorResult) {
        var daemon = Duration.zero, floor = Duration.zero
        for round in 0..<rounds {
            let share = count / rounds + (round < count % rounds ? 1 : 0)
            if round % 2 == 0 {
                daemon += try await Lifecycles.measure(address: address, providerCount: 1, count: share).elapsed
                floor += try await measure(address: address, script: script, count: share).elapsed
            } else {
                floor += try await measure(address: address, script: script, count: share).elapsed
                daemon += try await Lifecycles.measure(address: address, providerCount: 1, count: share).elapsed
            }
        }
        return (LifecycleResult(providers: 1, count: count, elapsed: daemon), FloorResult(script: script, count: count, elapsed: floor))
    }

    /// `count` lifecycles one after another (as the one-provider run does), after a warm-up,
    /// against a peer that replays `script`. With `subscribers`, that many more connections are on
    /// the bus, doing nothing, and the peer sends each of them the copies a subscriber got
    /// (`Step.subscriberSignals`), as the daemon does for its subscribers (`SubscriberCost`).
    static func measure(address: String, script: LifecycleScript, count: Int, subscribers: Int = 0) async throws -> FloorResult {
        // The peer is made last, knowing where its signals go.
        let observers = try (0..<subscribers).map { _ in try Connection(address: address) }
        defer { observers.forEach { $0.close() } }
        let app = try Connection(address: address)
        defer { app.close() }
        let controller = try Connection(address: address)
        defer { controller.close() }
        let peer = try NoOpPeer(address: address, script: script, app: app.uniqueName, controller: controller.uniqueName,
                                observers: observers.map(\.uniqueName))
        defer { peer.close() }
        let rendezvous = Rendezvous()

        // The app fulfils each action it is sent, as BenchProvider does.
        let performAction = Telephony1.Provider.performAction
        let actions = try await app.subscribe(MatchRule(sender: peer.uniqueName, interface: performAction.interface, member: performAction.name)) { message in
            guard let arguments = try? message.arguments(), arguments.count == 4, case .string(let id) = arguments[0],
                  case .string(let kind) = arguments[1] else { return }
            Task {
                do {
                    try await app.call(Telephony1.Provider.fulfillAction, destination: peer.uniqueName, path: NoOpPeer.path, try UUID.bench(id), [:])
                    rendezvous.signal(kind)
                } catch {
                    rendezvous.fail(BenchError("the floor's FulfillAction failed: \(error)"))
                }
            }
        }
        defer { actions.cancel() }
        let removals = try await controller.subscribe(MatchRule(sender: peer.uniqueName, interface: "org.freedesktop.DBus.ObjectManager",
                                                                member: "InterfacesRemoved")) { _ in rendezvous.signal("removed") }
        defer { removals.cancel() }

        func lifecycle(_ index: Int) async throws {
            let uuid = UUID().uuidString.lowercased()
            _ = try await app.call(Telephony1.Provider.reportNewIncomingCall, destination: peer.uniqueName, path: NoOpPeer.path,
                                   try UUID.bench(uuid), CallUpdate(handle: Handle(value: "caller-\(index)")))
            _ = try await controller.call(Telephony1.CallController.answerCall, destination: peer.uniqueName, path: NoOpPeer.path, uuid)
            try await rendezvous.wait(ActionName.answer.rawValue)
            _ = try await controller.call(Telephony1.CallController.endCall, destination: peer.uniqueName, path: NoOpPeer.path, uuid)
            try await rendezvous.wait("removed")
            try await rendezvous.wait("end")
        }
        for index in 0..<Lifecycles.warmUp(1) { try await lifecycle(index) }
        let start = ContinuousClock.now
        for index in 0..<count { try await lifecycle(index) }
        return FloorResult(script: script, count: count, elapsed: ContinuousClock.now - start)
    }
}

/// Serves the four requests of a lifecycle with the daemon's recorded replies
/// and sends the signals the daemon sent for each, and does nothing else.
private final class NoOpPeer: Sendable {
    static let path: ObjectPath = "/org/monkeycall/BenchFloor"
    let connection: Connection
    let objects: ObjectServer
    var uniqueName: String { connection.uniqueName }
    /// Where the unicast signals go: the app's and the controller's connections.
    let app: String
    let controller: String
    /// Subscribers, each sent a copy of every signal a subscriber gets.
    let observers: [String]
    /// The fulfilments alternate answer, end (one lifecycle at a time).
    private let fulfilled = Atomic(0)

    init(address: String, script: LifecycleScript, app: String, controller: String, observers: [String]) throws {
        self.app = app
        self.controller = controller
        self.observers = observers
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        let gone = DBusError.failed("the floor peer is closed")
        let provider = Interface(Telephony1.Provider.interface) {
            Method(Telephony1.Provider.reportNewIncomingCall, owner: self, gone: gone) { peer, _, _, _ in
                try peer.send(script.report)
                return try ObjectPath(dbusValue: script.report.reply[0])
            }
            Method(Telephony1.Provider.fulfillAction, owner: self, gone: gone) { peer, _, _, _ in
                let fulfilled = peer.fulfilled.wrappingAdd(1, ordering: .relaxed).newValue
                try peer.send(fulfilled % 2 == 1 ? script.fulfilAnswer : script.fulfilEnd)
            }
        }
        let controller = Interface(Telephony1.CallController.interface) {
            Method(Telephony1.CallController.answerCall, owner: self, gone: gone) { peer, _, _ in
                try peer.send(script.answer)
                return try String(dbusValue: script.answer.reply[0])
            }
            Method(Telephony1.CallController.endCall, owner: self, gone: gone) { peer, _, _ in
                try peer.send(script.end)
                return try String(dbusValue: script.end.reply[0])
            }
        }
        _ = try objects.export(Self.path, [provider, controller])
    }

    /// The step's signals as the daemon sent them; a unicast one to the app or the controller, by its interface.
    /// The subscribers' copies first (the daemon sends each signal to the call's app, then to its
    /// subscribers in no fixed order, the controller one of them). Each copy is marshalled again (the
    /// daemon marshals once and copies the bytes, `Message.copy`, which DBus keeps to itself): if
    /// anything, a floor higher than it could be.
    private func send(_ step: LifecycleScript.Step) throws {
        for observer in observers {
            for signal in step.subscriberSignals {
                try connection.emit(path: signal.path, interface: signal.interface, member: signal.member, signal.arguments, destination: observer)
            }
        }
        for signal in step.signals {
            let destination = signal.unicast ? (signal.interface == Telephony1.Provider.interface ? app : controller) : nil
            try connection.emit(path: signal.path, interface: signal.interface, member: signal.member, signal.arguments, destination: destination)
        }
    }

    func close() { connection.close() }
}

/// Signals as they arrive, taken in order.
private final class SignalLog: Sendable {
    private let messages = Mutex<[Message]>([])
    func append(_ message: Message) { messages.withLock { $0.append(message) } }
    func take() -> [Message] { messages.withLock { messages in defer { messages = [] }; return messages } }
}
