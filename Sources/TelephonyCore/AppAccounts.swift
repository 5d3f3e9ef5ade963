import FoundationEssentials

/// What each app uses of the shared tables, so that limits are counted per app rather than for
/// everyone at once: one app filling the pending transactions must not make the user's Answer fail.
///
/// An app's account is its sandboxed app id, or for a host app the connection that owns its
/// providers. The user's own actions — the service's notification buttons (no requester) and host
/// tools that own no provider (the CLI) — have no account: they are never counted, and a share of
/// the pending-transaction table is kept for them.
///
/// Each admission is written beside the operation it admits (`admitRegistration` by
/// `registerProvider`, `admitCall` and `admitIncomingCall` by `reportNewIncomingCall`,
/// `account(requester:app:)`, `admitTransaction` and `countPending` in the transaction's file); here
/// are the accounts, and their buckets, which they keep themselves (`take`, `forgetConnection`).
struct AppAccounts {
    var pendingTransactions: [String: Int] = [:]
    /// By `Provider.appAccount`: kept when the app's providers and connections go, so that
    /// registering again refills nothing (full buckets are forgotten: see `take`).
    var registrations: [String: TokenBucket] = [:]
    var incomingCalls: [String: TokenBucket] = [:]
    /// By the account of `Switchboard.account(requester:app:)`.
    var starts: [String: TokenBucket] = [:]

    /// Buckets of one kind past which the full ones are forgotten.
    static let bucketsBeforeSweep = 256

    /// Pending transactions of all the apps together.
    var appsPending: Int { pendingTransactions.values.reduce(0, +) }

    /// A token from the account's bucket of one kind, or `limitsExceeded` saying when the next one
    /// comes. Buckets that have filled up again are forgotten once there are many: a full bucket is
    /// what an account without one gets, so forgetting it changes nothing but the memory it takes.
    /// `what` is written only for a refusal: a report that gets its token builds no message.
    mutating func take(from buckets: WritableKeyPath<AppAccounts, [String: TokenBucket]>, _ account: String,
                       capacity: Int, perSecond: Double, what: @autoclosure () -> String, at now: UInt64) throws(TelephonyError) {
        guard perSecond > 0 else { return }
        if self[keyPath: buckets].count >= Self.bucketsBeforeSweep {
            self[keyPath: buckets] = self[keyPath: buckets].filter { !$0.value.isFull(at: now) }
        }
        var bucket = self[keyPath: buckets][account] ?? TokenBucket(capacity: capacity, perSecond: perSecond, now: now)
        defer { self[keyPath: buckets][account] = bucket }
        guard bucket.take(at: now) else {
            throw .limitsExceeded("\(account) \(what()) (the next in \(Figures.twoDecimals(bucket.secondsUntilNextToken(at: now))) s).")
        }
    }

    /// A host app's connection left: its outgoing-call bucket goes with it (the per-app buckets stay:
    /// the app may come back).
    mutating func forgetConnection(_ owner: String) {
        starts[owner] = nil
    }
}
