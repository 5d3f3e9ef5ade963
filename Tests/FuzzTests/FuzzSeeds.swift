import Foundation

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast generator whose whole
/// state is one 64-bit word, so a seed printed on failure replays the run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `chance` (0...1).
    mutating func chance(_ chance: Double) -> Bool { Double.random(in: 0..<1, using: &self) < chance }

    mutating func pick<C: Collection>(_ collection: C) -> C.Element? { collection.randomElement(using: &self) }

    /// One of `weighted`'s elements, each as likely as its weight.
    mutating func pick<T>(weighted: [(T, Int)]) -> T {
        let total = weighted.reduce(0) { $0 + $1.1 }
        var roll = Int.random(in: 0..<total, using: &self)
        for (element, weight) in weighted {
            if roll < weight { return element }
            roll -= weight
        }
        return weighted[weighted.count - 1].0
    }
}

/// What the fuzz and model tests run, from the environment:
/// - `MONKEYCALL_FUZZ_SEED`: one seed or a comma-separated list (default: a short fixed set);
/// - `MONKEYCALL_FUZZ_STEPS`: model-test steps per seed (default 300);
/// - `MONKEYCALL_FUZZ_INPUTS`: hostile values per method and seed (default 40);
/// - `MONKEYCALL_FUZZ_LONG=1`: a long run (see `long`).
/// A failure names its seed: `MONKEYCALL_FUZZ_SEED=<seed> scripts/test --filter FuzzTests` replays it.
enum FuzzSettings {
    static let defaultSeeds: [UInt64] = [1, 2, 3]

    static var seeds: [UInt64] {
        guard let text = environment("MONKEYCALL_FUZZ_SEED") else { return defaultSeeds }
        let seeds = text.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        return seeds.isEmpty ? defaultSeeds : seeds
    }

    /// `MONKEYCALL_FUZZ_LONG=1`: ten times the steps and inputs, and every huge message at the bus's limits.
    static var long: Bool { environment("MONKEYCALL_FUZZ_LONG") == "1" }
    static var modelSteps: Int { environment("MONKEYCALL_FUZZ_STEPS").flatMap { Int($0) } ?? (long ? 3000 : 300) }
    static var inputsPerMethod: Int { environment("MONKEYCALL_FUZZ_INPUTS").flatMap { Int($0) } ?? (long ? 400 : 40) }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
