import Foundation
import Testing
@testable import TelephonyCore

@Suite("Token bucket")
struct TokenBucketTests {
    static let start: UInt64 = 1_000_000_000_000_000

    @Test func burstThenRefillRate() {
        var bucket = TokenBucket(capacity: 3, perSecond: 10, now: Self.start)
        func take(at now: UInt64) -> Bool { bucket.take(at: now) } // #expect cannot call a mutating method
        for _ in 0..<3 { #expect(take(at: Self.start)) }
        #expect(!take(at: Self.start))
        #expect(abs(bucket.secondsUntilNextToken(at: Self.start) - 0.1) < 1e-9)
        // 99 ms: not yet; 100 ms: one token, and only one.
        #expect(!take(at: Self.start + 99_000))
        #expect(take(at: Self.start + 100_000))
        #expect(!take(at: Self.start + 100_000))
        // A long pause fills it to its capacity, no further.
        let later = Self.start + 60_000_000
        #expect(bucket.secondsUntilNextToken(at: later) == 0)
        for _ in 0..<3 { #expect(take(at: later)) }
        #expect(!take(at: later))
    }

    @Test("a clock set back refills nothing, and the bucket refills from the new time")
    func clockSetBack() {
        var bucket = TokenBucket(capacity: 1, perSecond: 1, now: Self.start)
        func take(at now: UInt64) -> Bool { bucket.take(at: now) } // #expect cannot call a mutating method
        #expect(take(at: Self.start))
        let back = Self.start - 3_600_000_000
        #expect(!take(at: back))
        #expect(take(at: back + 1_000_000))
    }

    @Test func noRefill() {
        var bucket = TokenBucket(capacity: 1, perSecond: 0, now: Self.start)
        func take(at now: UInt64) -> Bool { bucket.take(at: now) } // #expect cannot call a mutating method
        #expect(take(at: Self.start))
        #expect(!take(at: Self.start + 1_000_000_000))
        #expect(bucket.secondsUntilNextToken(at: Self.start) == .infinity)
    }
}

@Suite("Flood guard on new incoming calls")
struct FloodGuardTests {
    @Test("the defaults: 20 at once, then 10 a second; the error names the provider and the bound")
    func defaults() throws {
        let f = Fixture()
        let flood = try f.register("Flood")
        for index in 0..<20 { try f.incoming(flood, .n(index)) }
        let refused = expectErrorNamed("LimitsExceeded") { try f.incoming(flood, .n(20)) }
        let message = try #require(refused?.message)
        #expect(message.contains("Flood (\(flood.id))") && message.contains("20 at once") && message.contains("10 per second"), "\(message)")
        #expect(f.board.call(.n(20)) == nil)

        // Another provider is not affected.
        let other = try f.register("Other", owner: ":1.2")
        try f.incoming(other, .n(100))

        // A tenth of a second gives one more call, and only one.
        f.clock.advance(by: 0.1)
        try f.incoming(flood, .n(21))
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(flood, .n(22)) }
        // Ending calls gives nothing back: the guard counts reports, not calls alive.
        try f.board.reportCallEnded(provider: flood.id, uuid: .n(0), reason: .remoteEnded, at: 0)
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(flood, .n(22)) }
        // Two seconds fill the bucket to its capacity again.
        f.clock.advance(by: 2)
        for index in 30..<50 { try f.incoming(flood, .n(index)) }
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(flood, .n(50)) }
    }

    @Test("a report the update's checks refuse takes no place; one admitted and then refused by the screening does")
    func whatCounts() throws {
        let f = Fixture(options: .init(limits: .with { $0.incomingCallBurst = 2; $0.incomingCallsPerSecond = 1 }))
        let p = try f.register()
        let tooLong = Handle(type: .phoneNumber, value: String(repeating: "1", count: SwitchboardLimits.maximumHandleBytes + 1))
        for _ in 0..<5 {
            _ = expectErrorNamed("InvalidArgs") { try f.incoming(p, .n(1), CallUpdate(handle: tooLong)) }
        }
        // Admitted, then refused by the service's screening: never rung, but it counted.
        let blockList = RefusingScreening(verdict: .blocked)
        f.board.screening = blockList
        _ = expectErrorNamed("FilteredByBlockList") { try f.incoming(p, .n(1), CallUpdate(handle: Handle(value: "alice"))) }
        #expect(f.board.call(.n(1)) == nil)
        f.board.screening = nil
        try f.incoming(p, .n(2))
        let refused = expectErrorNamed("LimitsExceeded") { try f.incoming(p, .n(3)) }
        // The message, written only for a refusal, names the provider, the limit and the next token's time.
        #expect(refused?.message.contains("reports incoming calls too fast (provider ") == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("the limit is 2 at once, then 1 per second (the next in ") == true, "\(refused?.message ?? "")")
    }

    @Test("rate 0 turns the guard off")
    func off() throws {
        let f = Fixture(options: .init(limits: .with { $0.incomingCallsPerSecond = 0 }))
        let p = try f.register()
        for index in 0..<100 { try f.incoming(p, .n(index)) }
    }

    @Test("the bucket is the app's: registering again, or more providers, or more connections win nothing")
    func perApp() throws {
        let f = Fixture(options: .init(limits: .with { $0.incomingCallBurst = 1; $0.incomingCallsPerSecond = 1 }))
        let first = try f.register()
        try f.incoming(first, .n(1))
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(first, .n(2)) }
        f.board.invalidateProvider(first.id)
        let again = try f.register()
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(again, .n(2)) }
        // A sandboxed app: all its providers, on any connection, share one bucket.
        let sandboxed = try (0..<4).map { try f.board.registerProvider(owner: ":1.\(10 + $0)", appID: "org.example.Flood", configuration: .init(name: "Flood \($0)")) }
        try f.incoming(sandboxed[0], .n(10))
        for (index, provider) in sandboxed.enumerated() {
            _ = expectErrorNamed("LimitsExceeded") { try f.incoming(provider, .n(11 + index)) }
        }
        // Another app, and a host app whose Name is that app's id, have their own.
        try f.incoming(try f.register("Other", owner: ":1.20"), .n(20))
        try f.incoming(try f.register("org.example.Flood", owner: ":1.21"), .n(21))
        // A second later, one more for the app.
        f.clock.advance(by: 1)
        try f.incoming(sandboxed[3], .n(30))
        _ = expectErrorNamed("LimitsExceeded") { try f.incoming(sandboxed[1], .n(31)) }
    }

    @Test("live calls are bounded per app, incoming and outgoing: more providers hold no more")
    func callsPerApp() throws {
        var limits = SwitchboardLimits()
        limits.incomingCallsPerSecond = 0
        limits.maximumCallsPerApp = 3
        let f = Fixture(options: .init(limits: limits))
        let a = try f.board.registerProvider(owner: ":1.10", appID: "org.example.Many", configuration: .init(name: "A"))
        let b = try f.board.registerProvider(owner: ":1.11", appID: "org.example.Many", configuration: .init(name: "B"))
        try f.incoming(a, .n(1))
        try f.incoming(b, .n(2))
        _ = try f.board.requestTransaction([.start(.n(3), handle: Handle(value: "bob"), provider: b.id)], requester: ":1.11", app: "org.example.Many")
        let incoming = expectErrorNamed("LimitsExceeded") { try f.incoming(a, .n(4)) }
        #expect(incoming?.message.contains("3 calls") == true, "\(String(describing: incoming))")
        _ = expectErrorNamed("LimitsExceeded") {
            _ = try f.board.requestTransaction([.start(.n(5), handle: Handle(value: "carol"), provider: a.id)], requester: ":1.10", app: "org.example.Many")
        }
        try f.incoming(try f.register("Other"), .n(6))
    }

    @Test("the ringing share is the app's: more providers ring no more calls")
    func ringingPerApp() throws {
        let f = Fixture(options: .init(limits: .with { $0.maximumRingingCallsPerApp = 2; $0.incomingCallsPerSecond = 0 }))
        let a = try f.board.registerProvider(owner: ":1.10", appID: "org.example.Ring", configuration: .init(name: "A"))
        let b = try f.board.registerProvider(owner: ":1.11", appID: "org.example.Ring", configuration: .init(name: "B"))
        try f.incoming(a, .n(1))
        try f.incoming(b, .n(2))
        let refused = expectErrorNamed("LimitsExceeded") { try f.incoming(b, .n(3)) }
        #expect(refused?.message.contains("2 ringing calls") == true, "\(String(describing: refused))")
        try f.incoming(try f.register("Other"), .n(4))
    }
}

/// A screening that gives every caller one verdict and names them after their handle.
final class RefusingScreening: CallScreening {
    let verdict: ScreeningVerdict
    init(verdict: ScreeningVerdict) { self.verdict = verdict }
    func screen(_ handle: Handle, supplied name: String, now: UInt64) -> ScreenedCaller {
        ScreenedCaller(displayName: "screened \(handle.value)", verdict: verdict)
    }
    func displayName(of handle: Handle, supplied name: String) -> String { "named \(handle.value)" }
}
