import Foundation
@_exported import FuzzSupport

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
