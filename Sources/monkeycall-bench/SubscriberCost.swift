import Foundation

/// What observers cost the service now that nothing is broadcast: a 1-provider call lifecycle with
/// 50 subscribed connections (each gets a unicast copy of every signal) against one with none,
/// in alternating rounds so that both see the same machine.
enum SubscriberCost {
    struct Result {
        let subscribers: Int
        let without: LifecycleResult
        let with: LifecycleResult
        var ratio: Double { with.microsecondsEach / without.microsecondsEach }

        func render() -> [String] {
            ["subscribers: 1-provider lifecycle with \(subscribers) subscribers \(fixed(with.microsecondsEach, 1)) µs, with none "
                + "\(fixed(without.microsecondsEach, 1)) µs: ratio \(fixed(ratio, 2)) (\(with.count) of each, alternating rounds)"]
        }
    }

    static func measure(address: String, count: Int, subscribers: Int, rounds: Int = 4) async throws -> Result {
        let each = max(1, count / rounds)
        var without: [LifecycleResult] = [], with: [LifecycleResult] = []
        for _ in 0..<rounds {
            without.append(try await Lifecycles.measure(address: address, providerCount: 1, count: each))
            with.append(try await Lifecycles.measure(address: address, providerCount: 1, count: each, subscribers: subscribers))
        }
        func sum(_ results: [LifecycleResult]) -> LifecycleResult {
            LifecycleResult(providers: 1, count: results.reduce(0) { $0 + $1.count }, elapsed: results.reduce(.zero) { $0 + $1.elapsed })
        }
        return Result(subscribers: subscribers, without: sum(without), with: sum(with))
    }
}
