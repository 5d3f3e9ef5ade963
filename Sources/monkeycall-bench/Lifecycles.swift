import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

struct LifecycleResult {
    let providers: Int
    let count: Int
    let elapsed: Duration
    var perSecond: Double { Double(count) / elapsed.seconds }
    /// Wall time per lifecycle: with several in flight, the inverse of the throughput.
    var microsecondsEach: Double { elapsed.microseconds / Double(count) }
}

/// Full call lifecycles: the provider reports an incoming call, the user's
/// controller answers it, the provider fulfils the answer, the controller ends
/// the call, the provider fulfils the end, and the call object is removed.
enum Lifecycles {
    static func fulfilledKey(_ kind: String, _ uuid: String) -> String { "\(kind) fulfilled for \(uuid)" }
    static func removedKey(_ path: ObjectPath) -> String { "\(path) removed" }

    /// Runs `count` lifecycles spread round-robin over `providerCount`
    /// providers, one in flight per provider, after an unmeasured warm-up.
    /// `measuring` runs between the warm-up and the measured run; `tally`
    /// counts lifecycles as they complete (for a long run's progress).
    /// `subscribers`: other connections that called `Manager.Subscribe` for the whole run (observers
    /// such as `monkeycall watch`): each gets a unicast copy of every signal.
    static func measure(address: String, providerCount: Int, count: Int, subscribers: Int = 0, tally: LifecycleTally = LifecycleTally(),
                        measuring: () throws -> Void = {}) async throws -> LifecycleResult {
        let observers = try await mapConcurrently(subscribers, limit: 16) { _ in
            let observer = try Connection(address: address)
            try await observer.subscribeToTelephony()
            return observer
        }
        defer { observers.forEach { $0.close() } }
        return try await withRunners(address: address, providerCount: providerCount, name: "bench") { runner in
            try await runner(LifecycleTally()).lifecycles(warmUp(providerCount))
            try measuring()
            let start = ContinuousClock.now
            try await runner(tally).lifecycles(count)
            return LifecycleResult(providers: providerCount, count: count, elapsed: ContinuousClock.now - start)
        }
    }

    /// Lifecycles over `providerCount` providers, one in flight each, for as long as `going()` says
    /// (checked before each starts); `tally` counts them.
    static func run(address: String, providerCount: Int, tally: LifecycleTally, while going: @escaping @Sendable () -> Bool) async throws {
        try await withRunners(address: address, providerCount: providerCount, name: "going") { runner in
            try await runner(tally).lifecycles(Int.max, while: going)
        }
    }

    /// A controller and `providerCount` providers, closed when `body` returns; `body` makes
    /// runners over them that count into the tally it gives.
    private static func withRunners<T>(address: String, providerCount: Int, name: String,
                                       _ body: (_ runner: (LifecycleTally) -> Runner) async throws -> T) async throws -> T {
        let rendezvous = Rendezvous()
        let controller = try Connection(address: address)
        let removals = try await controller.subscribe(MatchRule(
            sender: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"
        )) { message in
            if case .objectPath(let path)? = try? message.arguments().first { rendezvous.signal(removedKey(path)) }
        }
        defer {
            controller.close()
            removals.cancel()
        }
        // The service sends InterfacesRemoved only to the call's app and to subscribers.
        try await controller.subscribeToTelephony()
        let providers = try await mapConcurrently(providerCount, limit: 16) { index in
            try await BenchProvider(address: address, name: "\(name)-\(index)", rendezvous: rendezvous)
        }
        defer { providers.forEach { $0.close() } }
        return try await body { tally in Runner(controller: controller, providers: providers, rendezvous: rendezvous, tally: tally) }
    }

    /// Lifecycles run before the measured ones.
    static func warmUp(_ providerCount: Int) -> Int { max(20, 2 * providerCount) }

    private struct Runner: Sendable {
        let controller: Connection
        let providers: [BenchProvider]
        let rendezvous: Rendezvous
        let tally: LifecycleTally

        func lifecycles(_ count: Int, while going: @escaping @Sendable () -> Bool = { true }) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (first, provider) in providers.enumerated() {
                    group.addTask {
                        for index in stride(from: first, to: count, by: providers.count) {
                            guard going() else { return }
                            try await lifecycle(index, provider)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        private func lifecycle(_ index: Int, _ provider: BenchProvider) async throws {
            let uuid = UUID().uuidString.lowercased()
            try await retryingWhenLimited { try await provider.reportIncoming(uuid, handle: "caller-\(index)") }
            try await retryingWhenLimited { try await controller.telephony(Telephony1.CallController.answerCall, uuid) }
            try await rendezvous.wait(fulfilledKey(ActionName.answer.rawValue, uuid))
            try await controller.telephony(Telephony1.CallController.endCall, uuid)
            try await rendezvous.wait(removedKey(Telephony1.callPath(uuid)))
            // The removal may overtake the reply to FulfillAction(end); waiting
            // for both leaves the provider idle, and so safe to close, at the end.
            try await rendezvous.wait(fulfilledKey("end", uuid))
            tally.completed()
        }

        /// A bound the service sets (the flood guard on new calls; the actions in one
        /// transaction, which grow with the calls still active that an answer must
        /// hold) is a request to slow down: wait and try again, as an app should.
        private func retryingWhenLimited(_ request: () async throws -> Void) async throws {
            while true {
                do {
                    return try await request()
                } catch let error as DBusError where error.name == DBusError.Name.limitsExceeded {
                    tally.throttled()
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
    }
}

/// Lifecycles completed, and requests refused by a limit, counted across tasks.
final class LifecycleTally: Sendable {
    private let tally = Mutex((done: 0, refused: 0))

    func completed() { tally.withLock { $0.done += 1 } }
    func throttled() { tally.withLock { $0.refused += 1 } }
    var counts: (completed: Int, throttled: Int) { tally.withLock { ($0.done, $0.refused) } }
}
