import FoundationEssentials

/// What each app uses of the shared tables, so that limits are counted per app rather than for
/// everyone at once: one app filling the pending transactions must not make the user's Answer fail.
///
/// An app's account is its sandboxed app id, or for a host app the connection that owns its
/// providers. The user's own actions — the service's notification buttons (no requester) and host
/// tools that own no provider (the CLI) — have no account: they are never counted, and a share of
/// the pending-transaction table is kept for them.
struct AppAccounts {
    var pendingTransactions: [String: Int] = [:]
    /// By `Provider.appAccount`: kept when the app's providers and connections go, so that
    /// registering again refills nothing (full buckets are forgotten: see `take`).
    var registrations: [String: TokenBucket] = [:]
    var incomingCalls: [String: TokenBucket] = [:]
    /// By the account of `account(requester:app:)`.
    var starts: [String: TokenBucket] = [:]

    /// Buckets of one kind past which the full ones are forgotten.
    static let bucketsBeforeSweep = 256

    /// Pending transactions of all the apps together.
    var appsPending: Int { pendingTransactions.values.reduce(0, +) }
}

extension Switchboard {
    /// The account a request is counted against; nil for the user's own.
    func account(requester: String?, app: String) -> String? {
        if !app.isEmpty { return app }
        guard let requester, !providers(ownedBy: requester).isEmpty else { return nil }
        return requester
    }

    /// Refuses a transaction that would take an app over its share of the pending table, or over
    /// its rate of outgoing calls; the user's own requests only meet the table's overall size.
    func admitTransaction(_ requests: [ActionRequest], account: String?) throws(TelephonyError) {
        let limits = options.limits
        guard transactions.count < limits.maximumPendingTransactions else {
            throw .limitsExceeded("\(transactions.count) transactions are still pending; the limit is \(limits.maximumPendingTransactions).")
        }
        guard let account else { return }
        let mine = accounts.pendingTransactions[account, default: 0]
        guard mine < limits.maximumPendingTransactionsPerApp else {
            throw .limitsExceeded("\(account) has \(mine) transactions still pending; the limit for one app is \(limits.maximumPendingTransactionsPerApp).")
        }
        let forApps = limits.maximumPendingTransactions - limits.userReservedPendingTransactions
        guard accounts.appsPending < forApps else {
            throw .limitsExceeded("Apps have \(accounts.appsPending) transactions still pending; the limit for apps is \(forApps) (the rest is kept for the user's own actions).")
        }
        if requests.contains(where: { if case .start = $0.kind { true } else { false } }) {
            try take(from: \.starts, account, capacity: limits.outgoingCallBurst, perSecond: limits.outgoingCallsPerSecond,
                     what: "starts outgoing calls too fast; the limit is \(limits.outgoingCallBurst) at once, then \(Figures.plain(limits.outgoingCallsPerSecond)) per second")
        }
    }

    /// A registration by `owner` (of the sandboxed app `appID`, "" for a host app, registering as
    /// `name`): per app, at most `maximumProvidersPerApp` providers over all its connections, and
    /// `registrationsPerMinute`, counted against the app's account (`Provider.appAccount`).
    /// A host app is counted by its process (`process`) as well as by its Name: new Names from one
    /// process get no more providers and no more registrations.
    func admitRegistration(owner: String, appID: String, process: String, name: String) throws(TelephonyError) {
        let limits = options.limits
        let account = Provider.appAccount(appID: appID, name: name)
        if !appID.isEmpty {
            let owned = providers.values.count { $0.appID == appID }
            guard owned < limits.maximumProvidersPerApp else {
                throw .limitsExceeded("The app \(appID) already has \(owned) providers registered; the limit is \(limits.maximumProvidersPerApp).")
            }
        } else if !process.isEmpty {
            let owned = providers.values.count { $0.process == process }
            guard owned < limits.maximumProvidersPerApp else {
                throw .limitsExceeded("This process already has \(owned) providers registered, under whatever names; the limit is \(limits.maximumProvidersPerApp).")
            }
        }
        let what = "registers providers too often; the limit is \(limits.registrationsPerMinute) a minute"
        let perSecond = Double(limits.registrationsPerMinute) / 60
        if appID.isEmpty, !process.isEmpty {
            // The process first: a new Name comes with a full bucket of its own, the process does not.
            try take(from: \.registrations, process, capacity: limits.registrationsPerMinute, perSecond: perSecond, what: what)
        }
        try take(from: \.registrations, account, capacity: limits.registrationsPerMinute, perSecond: perSecond, what: what)
    }

    /// A token from the account's bucket, or `limitsExceeded` saying when the next one comes.
    /// Buckets that have filled up again are forgotten once there are many: a full bucket is what
    /// an account without one gets, so forgetting it changes nothing but the memory it takes.
    func take(from buckets: WritableKeyPath<AppAccounts, [String: TokenBucket]>, _ account: String,
                      capacity: Int, perSecond: Double, what: String) throws(TelephonyError) {
        guard perSecond > 0 else { return }
        let now = clock.now
        if accounts[keyPath: buckets].count >= AppAccounts.bucketsBeforeSweep {
            accounts[keyPath: buckets] = accounts[keyPath: buckets].filter { !$0.value.isFull(at: now) }
        }
        var bucket = accounts[keyPath: buckets][account] ?? TokenBucket(capacity: capacity, perSecond: perSecond, now: now)
        defer { accounts[keyPath: buckets][account] = bucket }
        guard bucket.take(at: now) else {
            throw .limitsExceeded("\(account) \(what) (the next in \(Figures.twoDecimals(bucket.secondsUntilNextToken(at: now))) s).")
        }
    }

    /// Counts a transaction that became pending, or one that is gone.
    func countPending(_ account: String?, _ change: Int) {
        guard let account else { return }
        let count = accounts.pendingTransactions[account, default: 0] + change
        accounts.pendingTransactions[account] = count > 0 ? count : nil
    }

    /// A host app's connection left: its outgoing-call bucket goes with it (the per-app buckets stay:
    /// the app may come back).
    func forgetAccount(ofConnection owner: String) {
        accounts.starts[owner] = nil
    }
}
