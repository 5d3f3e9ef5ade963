import DBus
import Foundation
import MonkeyCallAPI

/// The app's side of the service: it reports calls the app did not start
/// through the system (incoming calls, connection progress, remote ends) and
/// receives the user's actions through its delegate (CallKit's `CXProvider`).
///
/// Creating a provider registers it with monkeycalld (started by D-Bus
/// activation where it is installed so). When the service restarts, or the
/// registration is lost, the provider registers again by itself with the same
/// configuration: the delegate hears `providerDidReset` and then `providerDidBegin`.
///
/// State lives on the bus connection's queue; the methods may be called from any thread.
///
/// An app that links MonkeyCallKit gains no periodic wake-up: the kit's tasks run on a serial
/// executor of its own, not on Swift concurrency's default one, whose first job starts
/// libdispatch's once-a-second monitor on Linux. The app's own tasks are its business; to stay
/// quiet when idle, give them a serial executor too (`SerialTaskExecutor`, `runMain`).
public final class CXProvider: @unchecked Sendable {
    /// The configuration the provider registers with (also on every re-registration).
    public let configuration: CXProviderConfiguration

    let serviceConnection: ServiceConnection?
    let connectionError: CXError?

    private let delegateLock = NSLock()
    private weak var delegateObject: (any CXProviderDelegate)?
    private var delegateQueue = DispatchQueue(label: "MonkeyCallKit.provider.delegate")
    private static let orphanedCompletions = DispatchQueue(label: "MonkeyCallKit.provider.completions")
    /// The service said DidBegin while no delegate was set (it can, when the
    /// registration is quicker than the app's `setDelegate`): the next delegate hears it.
    private var beganUnheard = false

    // On the service connection's queue:
    enum State {
        case starting, registering, registered(ObjectPath), unavailable(CXError), invalidated
    }
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

    /// Provider methods run one after the other, in the order the app called them.
    struct Job: Sendable {
        let member: String
        let arguments: [DBusValue]
        let completion: @Sendable (Result<[DBusValue], any Error>) -> Void
    }
    private let jobs: AsyncStream<Job>.Continuation
    private var worker: Task<Void, Never>?

    /// Registers a provider with the service on the session bus.
    public convenience init(configuration: CXProviderConfiguration) {
        self.init(configuration: configuration, busAddress: nil)
    }

    /// Registers a provider with the service on the bus at `busAddress` (nil: the session bus).
    public convenience init(configuration: CXProviderConfiguration, busAddress: String?) {
        do {
            self.init(configuration: configuration, serviceConnection: try ServiceConnection.shared(address: busAddress), error: nil)
        } catch {
            self.init(configuration: configuration, serviceConnection: nil, error: CXError(code: .noBus, name: error.name, message: error.message))
        }
    }

    init(configuration: CXProviderConfiguration, serviceConnection: ServiceConnection?, error: CXError? = nil) {
        self.configuration = configuration
        self.serviceConnection = serviceConnection
        self.connectionError = error
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        jobs = continuation
        worker = Task(executorPreference: serviceConnection?.tasks ?? SerialTaskExecutor.monkeyCallKit) { [weak self] in
            for await job in stream {
                guard let self else {
                    job.completion(.failure(CXError.invalidated))
                    continue
                }
                await self.run(job)
            }
        }
        if let error {
            state = .unavailable(error)
        } else {
            setRegistering(true)
            start()
        }
    }

    deinit {
        if countsAsRegistering { serviceConnection?.endRegistering() }
        jobs.finish()
        serviceConnection?.removeOwnerListener(self)
    }

    // MARK: Delegate

    /// Sets the delegate and the queue its methods are called on (nil: a private serial queue).
    public func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?) {
        delegateLock.withLock {
            delegateObject = delegate
            delegateQueue = queue ?? DispatchQueue(label: "MonkeyCallKit.provider.delegate")
            if let delegate, beganUnheard {
                beganUnheard = false
                let work = UncheckedSendable((delegate, self))
                delegateQueue.async { work.value.0.providerDidBegin(work.value.1) }
            }
        }
    }

    /// `providerDidBegin`, kept for the next delegate when there is none yet.
    func deliverBegin() {
        delegateLock.withLock {
            guard let delegate = delegateObject else { beganUnheard = true; return }
            let work = UncheckedSendable((delegate, self))
            delegateQueue.async { work.value.0.providerDidBegin(work.value.1) }
        }
    }

    /// Calls `body` with the delegate on the delegate's queue.
    func deliver(_ body: @escaping (any CXProviderDelegate) -> Void) {
        let (delegate, queue) = delegateLock.withLock { (delegateObject, delegateQueue) }
        guard let delegate else { return }
        let work = UncheckedSendable((delegate, body))
        queue.async { work.value.1(work.value.0) }
    }

    // MARK: Reporting

    /// Tells the service of a new incoming call; it rings unless refused
    /// (`CXErrorCodeIncomingCallError`). The completion runs on the delegate's queue.
    public func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        submit(API.reportNewIncomingCall, APIValue.uuid(UUID), update.entries) { [weak self] result in
            let error: (any Error)? = if case .failure(let error) = result { ErrorMapping.incoming(error) } else { nil }
            // A provider already gone: a serial queue, never a global one (see `SerialTaskExecutor.monkeyCallKit`).
            let queue = self?.delegateLock.withLock { self?.delegateQueue } ?? CXProvider.orphanedCompletions
            queue.async { completion(error) }
        }
    }

    /// Tells the service of a new incoming call; throws `CXErrorCodeIncomingCallError` when it is refused.
    public func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate) async throws {
        let result: Result<[DBusValue], any Error> = await withCheckedContinuation { continuation in
            submit(API.reportNewIncomingCall, APIValue.uuid(UUID), update.entries) { continuation.resume(returning: $0) }
        }
        if case .failure(let error) = result { throw ErrorMapping.incoming(error) }
    }

    /// Reports changed details of a call; properties the update did not set stay as they are.
    public func reportCall(with UUID: UUID, updated update: CXCallUpdate) {
        submit(API.reportCallUpdated, APIValue.uuid(UUID), update.entries)
    }

    /// Reports that a call ended for a reason other than the user's End action.
    public func reportCall(with UUID: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason) {
        submit(API.reportCallEnded, APIValue.uuid(UUID), endedReason.apiName, APIValue.time(dateEnded))
    }

    /// Reports that an outgoing call started connecting (nil: now).
    public func reportOutgoingCall(with UUID: UUID, startedConnectingAt dateStartedConnecting: Date?) {
        submit(API.reportOutgoingCallStartedConnecting, APIValue.uuid(UUID), APIValue.time(dateStartedConnecting))
    }

    /// Reports that an outgoing call connected (nil: now).
    public func reportOutgoingCall(with UUID: UUID, connectedAt dateConnected: Date?) {
        submit(API.reportOutgoingCallConnected, APIValue.uuid(UUID), APIValue.time(dateConnected))
    }

    /// Ends the provider's calls as failed and removes it from the service; it does nothing more.
    public func invalidate() {
        guard let serviceConnection else { return }
        serviceConnection.connection.onQueue {
            guard !self.isInvalidating else { return }
            self.isInvalidating = true
            if case .starting = self.state { self.setRegistering(false) }
            self.serviceConnection?.removeOwnerListener(self)
            self.signalSubscription?.cancel()
            self.signalSubscription = nil
            self.removalSubscription?.cancel()
            self.removalSubscription = nil
        }
        submit(API.invalidate) { [weak self] _ in
            guard let self else { return }
            serviceConnection.connection.onQueue { self.becomeInvalidated() }
        }
    }

    /// The transactions whose actions the app has not completed yet.
    public var pendingTransactions: [CXTransaction] {
        guard let serviceConnection else { return [] }
        let collect = { () -> [CXTransaction] in
            var byTransaction: [UUID: [CXAction]] = [:]
            for action in self.pendingActions.values where !action.isComplete {
                byTransaction[action.outcome.transactionUUID ?? action.uuid, default: []].append(action)
            }
            return byTransaction.map { CXTransaction(uuid: $0.key, actions: $0.value) }
        }
        if serviceConnection.connection.isOnQueue { return collect() }
        let box = UncheckedSendable(collect)
        return serviceConnection.queue.sync { box.value() }
    }

    /// Tells the service connection whether this provider is on its way to being registered.
    func setRegistering(_ registering: Bool) {
        guard registering != countsAsRegistering else { return }
        countsAsRegistering = registering
        if registering { serviceConnection?.beginRegistering() } else { serviceConnection?.endRegistering() }
    }

    // MARK: Jobs

    typealias API = Telephony1.Provider

    /// Calls a method of the provider's object, in order with every other job.
    func submit<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, _ arguments: repeat each I,
        completion: @escaping @Sendable (Result<[DBusValue], any Error>) -> Void = { _ in }
    ) {
        jobs.yield(Job(member: spec.name, arguments: Args<repeat each I>.encode(repeat each arguments), completion: completion))
    }

    private func run(_ job: Job) async {
        do {
            guard let serviceConnection else { throw connectionError ?? CXError.serviceNotRunning }
            let path = try await registeredPath()
            job.completion(.success(try await serviceConnection.call(path, API.interface, job.member, job.arguments)))
        } catch {
            job.completion(.failure(error))
        }
    }
}

extension CXProvider: ActionPerformer {
    func complete(actionUUID: UUID, fulfilled: Bool, at date: Date?) {
        serviceConnection?.connection.onQueue { self.pendingActions[actionUUID] = nil }
        var record = Telephony1.ActionInfo()
        record.date = date.map(APIValue.time)
        let info = record.entries
        submit(fulfilled ? API.fulfillAction : API.failAction, APIValue.uuid(actionUUID), info)
    }
}
