import FoundationEssentials

/// Bounds that keep one misbehaving client from exhausting the service.
/// Exceeding one is `TelephonyError.limitsExceeded`.
public struct SwitchboardLimits: Sendable, Equatable {
    /// Providers one bus connection may register.
    public var maximumProvidersPerOwner: Int = 32
    /// Providers registered in total.
    public var maximumProviders: Int = 10_000
    /// Live calls of one provider.
    public var maximumCallsPerProvider: Int = 1_000
    /// Live calls of one app, over all its providers: more providers hold no more calls in memory.
    public var maximumCallsPerApp: Int = 1_000
    /// Ringing calls of one app, over all its providers (see `Provider.appAccount`).
    public var maximumRingingCallsPerApp: Int = 100
    /// Actions in one transaction, counting the ones the system adds.
    public var maximumActionsPerTransaction: Int = 64
    /// Transactions that are not yet complete, over all requesters.
    public var maximumPendingTransactions: Int = 10_000
    /// The flood guard: new incoming calls one app (all its providers) may report at once,
    /// then `incomingCallsPerSecond` on average (a token bucket). A person
    /// answers at most a call every few seconds; 20 at once lets an app that
    /// reconnects report the calls queued for it, and 10 a second is far above
    /// any call centre's rate for one desktop, while a flood gets no more than
    /// a small share of the service. Refused reports are `limitsExceeded`.
    public var incomingCallBurst: Int = 20
    /// 0 turns the flood guard off.
    public var incomingCallsPerSecond: Double = 10
    /// Per app (a sandboxed app id, or a host app's connection; see `AppAccounts`): pending
    /// transactions of one app.
    public var maximumPendingTransactionsPerApp: Int = 1_000
    /// Pending transactions kept for the user's own actions (notification buttons, the CLI): apps
    /// together never fill more than `maximumPendingTransactions` minus this. A tenth of the table
    /// unless set: a small table (a test's) keeps its size for apps.
    public var userReservedPendingTransactions: Int {
        get { reservedPendingTransactions ?? maximumPendingTransactions / 10 }
        set { reservedPendingTransactions = newValue }
    }
    private var reservedPendingTransactions: Int?
    /// Providers of one sandboxed app over all its connections (a host app: `maximumProvidersPerOwner`).
    public var maximumProvidersPerApp: Int = 32
    /// Registrations of one app in a minute (a burst of as many, then one every 60/N s); 0: no limit.
    public var registrationsPerMinute: Int = 60
    /// Connections of one app (a sandboxed app, a host process) subscribed to the service's signals:
    /// each is a copy of every signal its app may hear.
    public var maximumSubscriptionsPerApp: Int = 16
    /// Subscribed connections of host processes together: each gets a copy of every signal, so a
    /// whole call costs about 0.7 ms more per host subscriber (issue 53: 260 processes filled all
    /// 4,096 places, and every call took 2.3-4.2 s). The Phone app and GNOME Shell subscribe past it.
    public var maximumHostSubscriptions: Int = 32
    /// Subscribed connections in all: every signal's recipients are found by app, but each host
    /// subscriber gets a copy of every signal.
    public var maximumSubscriptions: Int = 4096
    /// Outgoing calls one app may start at once, then `outgoingCallsPerSecond`; 0 per second: no limit.
    public var outgoingCallBurst: Int = 20
    public var outgoingCallsPerSecond: Double = 10

    /// The defaults; change a limit by setting it.
    public init() {}

    /// Fixed bounds on strings and data (not configurable).
    public static let maximumHandleBytes = 1024
    public static let maximumCallerNameBytes = 1024
    public static let maximumContactIdentifierBytes = 1024
    public static let maximumDTMFDigits = 1024
    public static let maximumProviderNameCharacters = 64
    public static let maximumProviderNameBytes = 256
    /// `IconData`'s width and height, read from the PNG header.
    public static let maximumIconPixels: UInt32 = 512
    public static let maximumIconDataBytes = 256 * 1024
    public static let maximumConfigurationStringBytes = 4096
    public static let maximumURLSchemes = 32
    /// How far past now an app may date what it reports (clocks differ a little): 60 s, in µs.
    public static let reportedTimeLeeway: UInt64 = 60_000_000
}

/// Daemon options of the core.
public struct SwitchboardOptions: Sendable, Equatable {
    /// Seconds a provider has to fulfil or fail an action.
    public var actionTimeout: Double = 10
    /// Seconds an incoming call rings before the system ends it as unanswered.
    public var ringTimeout: Double = 45
    public var limits: SwitchboardLimits = .init()

    public init(actionTimeout: Double = 10, ringTimeout: Double = 45, limits: SwitchboardLimits = .init()) {
        self.actionTimeout = actionTimeout
        self.ringTimeout = ringTimeout
        self.limits = limits
    }
}
