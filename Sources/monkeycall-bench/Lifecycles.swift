import DBus
import Foundation
import MonkeyCallAPI

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
    static func measure(address: String, providerCount: Int, count: Int) async throws -> LifecycleResult {
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

        let providers = try await mapConcurrently(providerCount, limit: 16) { index in
            try await BenchProvider(address: address, name: "bench-\(index)", rendezvous: rendezvous)
        }
        defer { providers.forEach { $0.close() } }

        let run = Runner(controller: controller, providers: providers, rendezvous: rendezvous)
        try await run.lifecycles(max(20, 2 * providerCount))
        let start = ContinuousClock.now
        try await run.lifecycles(count)
        return LifecycleResult(providers: providerCount, count: count, elapsed: ContinuousClock.now - start)
    }

    private struct Runner: Sendable {
        let controller: Connection
        let providers: [BenchProvider]
        let rendezvous: Rendezvous

        func lifecycles(_ count: Int) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (first, provider) in providers.enumerated() {
                    group.addTask {
                        for index in stride(from: first, to: count, by: providers.count) {
                            try await lifecycle(index, provider)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        private func lifecycle(_ index: Int, _ provider: BenchProvider) async throws {
            let uuid = UUID().uuidString.lowercased()
            try await provider.reportIncoming(uuid, handle: "caller-\(index)")
            try await controller.telephony(Telephony1.Interface.callController, "AnswerCall", [.string(uuid)])
            try await rendezvous.wait(fulfilledKey("answer", uuid))
            try await controller.telephony(Telephony1.Interface.callController, "EndCall", [.string(uuid)])
            try await rendezvous.wait(removedKey(Telephony1.callPath(uuid)))
            // The removal may overtake the reply to FulfillAction(end); waiting
            // for both leaves the provider idle, and so safe to close, at the end.
            try await rendezvous.wait(fulfilledKey("end", uuid))
        }
    }
}
