import DBus
import MonkeyCallAPI

/// Latencies of one kind of round trip, in microseconds.
struct Samples {
    let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }

    var median: Double {
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Nearest rank.
    func percentile(_ p: Double) -> Double {
        sorted[max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)]
    }
}

struct RoundTripResult {
    let ping: Samples
    let get: Samples
    let rounds: Int
    let warmUp: Int
    var ratio: Double { self.get.median / ping.median }
}

/// `Peer.Ping`, which libdbus answers inside the daemon before any of our
/// code runs (the floor), against `Properties.Get(Manager, Version)`, which
/// goes through the object server: the difference is our dispatch overhead.
enum RoundTrips {
    static func measure(address: String, iterations: Int, rounds: Int = 10) async throws -> RoundTripResult {
        let connection = try Connection(address: address)
        defer { connection.close() }
        let ping: @Sendable () async throws -> [DBusValue] = { try await connection.ping(Telephony1.busName) }
        let getVersion: @Sendable () async throws -> [DBusValue] = {
            try await connection.version()
        }

        guard case .string? = try await getVersion().first?.unwrappedVariant else {
            throw BenchError("Properties.Get(Manager, Version) did not return a string")
        }
        let warmUp = max(100, iterations / 10)
        for _ in 0..<warmUp {
            _ = try await ping()
            _ = try await getVersion()
        }

        let (pings, gets) = try await interleaved(iterations: iterations, rounds: rounds, ping, getVersion)
        return RoundTripResult(ping: Samples(pings), get: Samples(gets), rounds: rounds, warmUp: warmUp)
    }

    /// Two kinds of round trip in interleaved rounds, the order flipping each
    /// round, so that noise on the machine (and any drift) falls on both alike.
    static func interleaved(iterations: Int, rounds: Int, _ first: @Sendable () async throws -> [DBusValue],
                            _ second: @Sendable () async throws -> [DBusValue]) async throws -> ([Double], [Double]) {
        var firsts: [Double] = [], seconds: [Double] = []
        firsts.reserveCapacity(iterations)
        seconds.reserveCapacity(iterations)
        for round in 0..<rounds {
            let count = iterations / rounds + (round < iterations % rounds ? 1 : 0)
            if round % 2 == 0 {
                firsts += try await time(count, first)
                seconds += try await time(count, second)
            } else {
                seconds += try await time(count, second)
                firsts += try await time(count, first)
            }
        }
        return (firsts, seconds)
    }

    private static func time(_ count: Int, _ operation: @Sendable () async throws -> [DBusValue]) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            _ = try await operation()
            samples.append((clock.now - start).microseconds)
        }
        return samples
    }
}
