import Foundation

/// What observers cost the service now that nothing is broadcast: a 1-provider call lifecycle with
/// `subscribers` subscribed connections (each gets a unicast copy of every signal) against one with
/// none, and against its floor: the no-op peer of `LifecycleFloor` replaying the same lifecycle and
/// sending the same unicast copies to as many connections. All three in alternating rounds (the
/// order reversed every other round), so that all see the same machine.
enum SubscriberCost {
    struct Result {
        let subscribers: Int
        let without: LifecycleResult
        let with: LifecycleResult
        /// The no-op peer's lifecycles, with the same copies to as many subscribers.
        let floor: FloorResult
        let rounds: Int
        var ratio: Double { with.microsecondsEach / without.microsecondsEach }
        var floorRatio: Double { with.microsecondsEach / floor.microsecondsEach }

        func render() -> [String] {
            ["subscribers: 1-provider lifecycle with \(subscribers) subscribers \(fixed(with.microsecondsEach, 1)) µs, with none "
                + "\(fixed(without.microsecondsEach, 1)) µs: ratio \(fixed(ratio, 2)) (\(with.count) of each, \(rounds) alternating rounds)",
             "the floor: a no-op peer replaying the lifecycle with the same \(floor.script.subscriberSignalCount) unicast copies to each of "
                + "\(subscribers) subscribers (\(floor.script.subscriberSignalNames.joined(separator: ", "))), \(fixed(floor.microsecondsEach, 1)) µs: with \(subscribers) / floor \(fixed(floorRatio, 2)) "
                + "(target <= \(fixed(Goals.subscribersFloor, 2)); same rounds)"]
        }
    }

    static func measure(address: String, script: LifecycleScript, count: Int, subscribers: Int, rounds: Int = 4) async throws -> Result {
        var without = Duration.zero, with = Duration.zero, floor = Duration.zero
        for round in 0..<rounds {
            let share = count / rounds + (round < count % rounds ? 1 : 0)
            let kinds = round % 2 == 0 ? [0, 1, 2] : [2, 1, 0]
            for kind in kinds {
                switch kind {
                case 0: without += try await Lifecycles.measure(address: address, providerCount: 1, count: share).elapsed
                case 1: with += try await Lifecycles.measure(address: address, providerCount: 1, count: share, subscribers: subscribers).elapsed
                default: floor += try await LifecycleFloor.measure(address: address, script: script, count: share, subscribers: subscribers).elapsed
                }
            }
        }
        return Result(subscribers: subscribers, without: LifecycleResult(providers: 1, count: count, elapsed: without),
                      with: LifecycleResult(providers: 1, count: count, elapsed: with),
                      floor: FloorResult(script: script, count: count, elapsed: floor), rounds: rounds)
    }
}
