import Foundation

/// Bounds that keep one misbehaving client from exhausting the service.
/// Exceeding one is `TelephonyError.limitsExceeded`.
public struct SwitchboardLimits: Sendable, Equatable {
    /// Providers one bus connection may register.
    public var maximumProvidersPerOwner: Int = 32
    /// Providers registered in total.
    public var maximumProviders: Int = 10_000
    /// Live calls of one provider.
    public var maximumCallsPerProvider: Int = 1_000
    /// Ringing calls of one provider.
    public var maximumRingingCallsPerProvider: Int = 100
    /// Actions in one transaction, counting the ones the system adds.
    public var maximumActionsPerTransaction: Int = 64
    /// Transactions that are not yet complete, over all requesters.
    public var maximumPendingTransactions: Int = 10_000

    public init(
        maximumProvidersPerOwner: Int = 32,
        maximumProviders: Int = 10_000,
        maximumCallsPerProvider: Int = 1_000,
        maximumRingingCallsPerProvider: Int = 100,
        maximumActionsPerTransaction: Int = 64,
        maximumPendingTransactions: Int = 10_000
    ) {
        self.maximumProvidersPerOwner = maximumProvidersPerOwner
        self.maximumProviders = maximumProviders
        self.maximumCallsPerProvider = maximumCallsPerProvider
        self.maximumRingingCallsPerProvider = maximumRingingCallsPerProvider
        self.maximumActionsPerTransaction = maximumActionsPerTransaction
        self.maximumPendingTransactions = maximumPendingTransactions
    }

    /// Fixed bounds on strings and data (not configurable).
    public static let maximumHandleBytes = 1024
    public static let maximumCallerNameBytes = 1024
    public static let maximumContactIdentifierBytes = 1024
    public static let maximumDTMFDigits = 1024
    public static let maximumProviderNameCharacters = 64
    public static let maximumIconDataBytes = 256 * 1024
    public static let maximumConfigurationStringBytes = 4096
    public static let maximumURLSchemes = 32
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
