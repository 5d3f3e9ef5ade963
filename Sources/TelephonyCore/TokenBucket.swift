/// A token bucket on the core's clock: holds up to `capacity` tokens, gains
/// `perSecond` of them per second, and each admitted event takes one. It lets
/// a burst of `capacity` through at once, then `perSecond` on average.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    public let perSecond: Double
    private var tokens: Double
    /// When `tokens` was last brought up to date, in the clock's microseconds.
    private var updatedAt: UInt64

    /// A full bucket at `now`.
    public init(capacity: Int, perSecond: Double, now: UInt64) {
        self.capacity = Double(max(capacity, 1))
        self.perSecond = max(perSecond, 0)
        tokens = self.capacity
        updatedAt = now
    }

    /// Takes a token if there is one.
    public mutating func take(at now: UInt64) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether the bucket has filled up again by `now`: as good as a new one.
    public func isFull(at now: UInt64) -> Bool {
        var bucket = self
        bucket.refill(at: now)
        return bucket.tokens >= capacity
    }

    /// Seconds until a token is there (0 when one is there now).
    public func secondsUntilNextToken(at now: UInt64) -> Double {
        var bucket = self
        bucket.refill(at: now)
        guard bucket.tokens < 1 else { return 0 }
        return perSecond > 0 ? (1 - bucket.tokens) / perSecond : .infinity
    }

    private mutating func refill(at now: UInt64) {
        // A clock set back refills nothing, and does not hold the bucket empty until it catches up.
        if now > updatedAt { tokens = min(capacity, tokens + Double(now - updatedAt) / 1_000_000 * perSecond) }
        updatedAt = now
    }
}
