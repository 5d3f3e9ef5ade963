@testable import TelephonyService
import Testing

@Suite("Who called lately, for the repeated-call exception")
struct RecentAttemptsTests {
    @Test("a second call within the window is a repeat; after it, not")
    func window() {
        var attempts = RecentAttempts(window: 100, capacity: 10)
        #expect(attempts.record("alice", at: 1_000) == nil)
        #expect(attempts.record("alice", at: 1_099) == 1_000)
        // Measured from the latest call, not the first.
        #expect(attempts.record("alice", at: 1_198) == 1_099)
        #expect(attempts.record("alice", at: 1_298) == nil)
        #expect(attempts.record("bob", at: 1_500) == nil)
        #expect(attempts.count == 1)
    }

    @Test("a flood of distinct callers keeps at most the capacity, dropping the oldest first")
    func capacity() {
        var attempts = RecentAttempts(window: 1_000_000, capacity: 100)
        for caller in 0..<10_000 { _ = attempts.record("caller \(caller)", at: UInt64(caller)) }
        #expect(attempts.count == 100)
        #expect(attempts.record("caller 9999", at: 10_000) == 9_999)
        #expect(attempts.record("caller 9899", at: 10_001) == nil)
    }

    @Test("a caller who called again is not dropped with its older attempt")
    func laterAttemptKept() {
        var attempts = RecentAttempts(window: 1_000, capacity: 2)
        _ = attempts.record("alice", at: 1)
        _ = attempts.record("bob", at: 2)
        _ = attempts.record("alice", at: 3)
        _ = attempts.record("carol", at: 4)
        // Over capacity: the oldest arrival (alice at 1) goes, but alice called again at 3; bob goes next.
        #expect(attempts.record("alice", at: 5) == 3)
        #expect(attempts.count == 2)
    }
}
