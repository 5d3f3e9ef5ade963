import DBus
import FoundationEssentials
import MonkeyCallAPI
import QueueExecutor

/// A provider's registration with the service, again whenever the service comes back, and the
/// actions handed to its app. An actor on the service connection's queue, whose executor it
/// shares: replies and signals, which come on that queue, enter it with `assumeIsolated`.
actor ProviderSession {
    enum State {
        case starting, registering, registered(ObjectPath), unavailable(CXError), invalidated
    }

    nonisolated let serviceConnection: ServiceConnection
    private nonisolated let configuration: CXProviderConfiguration
    /// The provider whose delegate hears of the session.
    weak var provider: CXProvider?

    var state: State = .starting
    var pathWaiters: [CheckedContinuation<ObjectPath, any Error>] = []
    /// The owner appeared while a registration was on its way: retry it if it failed for want of a service.
    var retryRegistration = false
    /// Signals that came while registering, replayed when the path is known.
    var earlySignals: [Message] = []
    var isInvalidating = false
    /// Actions handed to the app and not complete yet, by action UUID.
    var pendingActions: [UUID: any CXCallAction] = [:]
    var signalSubscription: Subscription?
    /// Whether the service connection counts this provider among those registering.
    var countsAsRegistering = false
    var removalSubscription: Subscription?

    nonisolated var unownedExecutor: UnownedSerialExecutor { serviceConnection.executor.asUnownedSerialExecutor() }

    init(serviceConnection: ServiceConnection, configuration: CXProviderConfiguration) {
        self.serviceConnection = serviceConnection
        self.configuration = configuration
    }

    deinit {
        if countsAsRegistering { serviceConnection.endRegistering() }
        serviceConnection.removeOwnerListener(self)
    }

    /// Runs `work` on the session: at once when already on the connection's queue, else soon.
    nonisolated func enter(_ work: @escaping @Sendable (isolated ProviderSession) -> Void) {
        serviceConnection.executor.enter(self, work)
    }

    /// Runs `work` on the session and waits for it, from any thread.
    nonisolated func synchronously<T: Sendable>(_ work: @Sendable (isolated ProviderSession) -> T) -> T {
        let executor = serviceConnection.executor
        if executor.isOnQueue { return assumeIsolated(work) }
        return executor.queue.sync { assumeIsolated(work) }
    }

    /// Counts as registering at once, so that a request made right after the provider was
    /// created finds it; then follows the service and registers.
    nonisolated func start(for provider: CXProvider) {
        enter { session in
            session.provider = provider
            session.setRegistering(true)
        }
        let serviceConnection = self.serviceConnection
        Task(executorPreference: serviceConnection.tasks) { [weak self] in
            await serviceConnection.ready()
            guard let self else { return }
            // Signals come on the connection's queue, the session's executor.
            let subscription = try? await serviceConnection.connection.subscribe(MatchRule(interface: Telephony1.Provider.interface)) { [weak self] message in
                self?.assumeIsolated { $0.receive(message) }
            }
            let removals = MatchRule(sender: Telephony1.busName, path: Telephony1.rootPath,
                                     interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
            let removalSubscription = try? await serviceConnection.connection.subscribe(removals) { [weak self] message in
                guard case .objectPath(let path)? = try? message.arguments().first else { return }
                self?.assumeIsolated { $0.objectRemoved(path) }
            }
            serviceConnection.addOwnerListener(self) { [weak self] old, new in
                self?.assumeIsolated { $0.ownerChanged(from: old, to: new) }
            }
            await self.subscribed(subscription, removalSubscription)
        }
    }

    /// A signal the service sent: turned into the delegate's call (by `deliver`, on its queue).
    private func receive(_ message: Message) {
        guard !isInvalidating, let member = message.member, let path = message.path else { return }
        switch state {
        case .registered(let mine):
            guard path == mine else { return }
        case .registering:
            if earlySignals.count < 1000 { earlySignals.append(message) }
            return
        default:
            return
        }
        let arguments = (try? message.arguments()) ?? []
        switch member {
        case Telephony1.Provider.didBegin.name:
            provider?.deliverBegin()
        case Telephony1.Provider.performAction.name:
            guard let action = ActionCoding.action(arguments) else { return }
            guard let provider else { return }
            action.outcome.deliver(to: provider)
            pendingActions[action.uuid] = action
            deliver { Self.perform(action, on: $0, from: $1) }
        case Telephony1.Provider.timedOutPerformingAction.name:
            guard case .string(let id)? = arguments.first, let uuid = UUID(uuidString: id) else { return }
            let action: any CXCallAction
            if let pending = pendingActions.removeValue(forKey: uuid) {
                action = pending
            } else if arguments.count == 3, case .string(let call) = arguments[2], let callUUID = UUID(uuidString: call) {
                action = ForgottenCallAction(uuid: uuid, call: callUUID)
            } else {
                return
            }
            action.outcome.markComplete()
            deliver { $0.provider($1, timedOutPerforming: action) }
        case Telephony1.Provider.didReset.name:
            reset()
        case Telephony1.Provider.didActivateAudioSession.name:
            deliver { $0.provider($1, didActivate: AudioSession(isActive: true)) }
        case Telephony1.Provider.didDeactivateAudioSession.name:
            deliver { $0.provider($1, didDeactivate: AudioSession(isActive: false)) }
        case Telephony1.Provider.didRequestShowApp.name:
            guard case .string(let call)? = arguments.first, let uuid = UUID(uuidString: call) else { return }
            deliver { $0.provider($1, didRequestShowAppFor: uuid) }
        default:
            break
        }
    }

    private func subscribed(_ subscription: Subscription?, _ removalSubscription: Subscription?) {
        guard !isInvalidating else { return setRegistering(false) }
        signalSubscription = subscription
        self.removalSubscription = removalSubscription
        register()
    }

    func register() {
        state = .registering
        setRegistering(true)
        retryRegistration = false
        // The reply is taken on the connection's queue, not in a Task: an app whose tasks keep Swift
        // concurrency's threads busy would otherwise hold up its own registration.
        serviceConnection.connection.call(Telephony1.Manager.registerProvider, destination: Telephony1.busName,
                             path: Telephony1.rootPath, configuration.entries) { [weak self] result in
            self?.assumeIsolated { session in
                switch result {
                case .success(let path): session.registered(at: path)
                case .failure(let error): session.registrationFailed(error)
                }
            }
        }
    }

    private func registered(at path: ObjectPath) {
        state = .registered(path)
        setRegistering(false)
        let waiters = pathWaiters
        pathWaiters = []
        waiters.forEach { $0.resume(returning: path) }
        let early = earlySignals
        earlySignals = []
        for message in early { receive(message) }
    }

    private func registrationFailed(_ error: any Error) {
        let failure = CXError(error)
        if failure.code == .serviceNotRunning && retryRegistration {
            register()
            return
        }
        state = .unavailable(failure)
        setRegistering(false)
        earlySignals = []
        let waiters = pathWaiters
        pathWaiters = []
        waiters.forEach { $0.resume(throwing: failure) }
    }

    /// The service's name changed hands.
    func ownerChanged(from old: String, to new: String) {
        guard !isInvalidating else { return }
        switch state {
        case .registered:
            // The service that knew us is gone: every call has ended.
            state = .unavailable(.serviceNotRunning)
            reset()
            if !new.isEmpty { register() }
        case .registering:
            if !new.isEmpty { retryRegistration = true }
        case .unavailable:
            if !new.isEmpty { register() }
        case .starting, .invalidated:
            break
        }
    }

    /// An object of the service went away. When it is this
    /// provider's, the registration was lost while the service runs on.
    func objectRemoved(_ path: ObjectPath) {
        guard !isInvalidating, case .registered(let mine) = state, mine == path else { return }
        reset()
        register()
    }

    /// Drops the actions in flight and tells the app to drop its calls.
    func reset() {
        let actions = pendingActions.values
        pendingActions = [:]
        actions.forEach { $0.outcome.markComplete() }
        deliver { $0.providerDidReset($1) }
    }

    func becomeInvalidated() {
        state = .invalidated
        setRegistering(false)
        let waiters = pathWaiters
        pathWaiters = []
        waiters.forEach { $0.resume(throwing: CXError.invalidated) }
        let actions = pendingActions.values
        pendingActions = [:]
        actions.forEach { $0.outcome.markComplete() }
    }

    /// The provider's object path, once registered; throws when the service is not running.
    func registeredPath() async throws -> ObjectPath {
        switch state {
        case .registered(let path): return path
        case .starting, .registering: return try await withCheckedThrowingContinuation { pathWaiters.append($0) }
        case .unavailable(let error): throw error
        case .invalidated: throw CXError.invalidated
        }
    }

    /// `invalidate()`'s first step: the provider stops listening at once.
    func beginInvalidating() {
        guard !isInvalidating else { return }
        isInvalidating = true
        if case .starting = state { setRegistering(false) }
        serviceConnection.removeOwnerListener(self)
        signalSubscription?.cancel()
        signalSubscription = nil
        removalSubscription?.cancel()
        removalSubscription = nil
    }

    /// The transactions whose actions the app has not completed yet.
    var pendingTransactions: [CXTransaction] {
        var byTransaction: [UUID: [CXAction]] = [:]
        for action in pendingActions.values where !action.isComplete {
            byTransaction[action.outcome.transactionUUID ?? action.uuid, default: []].append(action)
        }
        return byTransaction.map { CXTransaction(uuid: $0.key, actions: $0.value) }
    }

    /// Tells the service connection whether this provider is on its way to being registered.
    func setRegistering(_ registering: Bool) {
        guard registering != countsAsRegistering else { return }
        countsAsRegistering = registering
        if registering { serviceConnection.beginRegistering() } else { serviceConnection.endRegistering() }
    }

    /// Calls `body` with the delegate and the provider on the delegate's queue.
    func deliver(_ body: @escaping (any CXProviderDelegate, CXProvider) -> Void) {
        guard let provider else { return }
        provider.deliver { body($0, provider) }
    }

    /// Hands `action` to the delegate's `perform` method for its class, on the delegate's queue.
    private static func perform(_ action: any CXCallAction, on delegate: any CXProviderDelegate, from provider: CXProvider) {
        switch action {
        case let action as CXStartCallAction: delegate.provider(provider, perform: action)
        case let action as CXAnswerCallAction: delegate.provider(provider, perform: action)
        case let action as CXEndCallAction: delegate.provider(provider, perform: action)
        case let action as CXSetHeldCallAction: delegate.provider(provider, perform: action)
        case let action as CXSetMutedCallAction: delegate.provider(provider, perform: action)
        case let action as CXSetGroupCallAction: delegate.provider(provider, perform: action)
        case let action as CXPlayDTMFCallAction: delegate.provider(provider, perform: action)
        default: action.fail()
        }
    }
}
