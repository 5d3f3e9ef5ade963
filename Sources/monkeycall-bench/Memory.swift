import DBus
import Foundation
import MonkeyCallAPI

struct MemoryResult {
    let idle: Int
    /// Before the memory phase, after the other phases: the base for the per-item figures.
    let before: Int
    let providers: Int
    let withProviders: Int
    let calls: Int
    let withCalls: Int
    var bytesPerProvider: Double { Double(withProviders - before) / Double(providers) }
    var bytesPerCall: Double { Double(withCalls - withProviders) / Double(calls) }
}

/// The daemon's RSS with many providers and many ringing calls.
enum Memory {
    /// The daemon allows this many providers per connection.
    static let providersPerConnection = 32
    static let inFlight = 64

    static func measure(_ daemon: DaemonUnderTest, idle: Int, providers: Int, calls: Int) async throws -> MemoryResult {
        let connections = try (0..<(providers + providersPerConnection - 1) / providersPerConnection).map { _ in
            try Connection(address: daemon.address)
        }
        defer { connections.forEach { $0.close() } }
        let before = try daemon.residentBytes()

        let paths = try await mapConcurrently(providers, limit: inFlight) { index in
            try await connections[index % connections.count].registerProvider("memory-\(index)")
        }
        let withProviders = try await settledRSS(daemon, connections[0])

        // Calls go round-robin over the providers; none is answered, so all ring.
        _ = try await mapConcurrently(calls, limit: inFlight) { index in
            let provider = index % providers
            _ = try await connections[provider % connections.count].telephony(
                Telephony1.Provider.reportNewIncomingCall, UUID(), CallUpdate(handle: Handle(value: "caller-\(index)")), at: paths[provider])
        }
        let withCalls = try await settledRSS(daemon, connections[0])
        return MemoryResult(idle: idle, before: before, providers: providers, withProviders: withProviders, calls: calls, withCalls: withCalls)
    }

    /// RSS once the daemon has worked through its queue: a round trip through
    /// it first, so that nothing sent before is still waiting to be handled.
    private static func settledRSS(_ daemon: DaemonUnderTest, _ connection: Connection) async throws -> Int {
        try await connection.version()
        return try daemon.residentBytes()
    }
}
