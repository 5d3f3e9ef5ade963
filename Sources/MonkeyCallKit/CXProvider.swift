import DBus
import Dispatch
import FoundationEssentials
import MonkeyCallAPI
import QueueExecutor
import Synchronization

/// The app's side of the service: it reports calls the app did not start
/// through the system (incoming calls, connection progress, remote ends) and
/// receives the user's actions through its delegate (CallKit's `CXProvider`).
///
/// Creating a provider registers it with monkeycalld (started by D-Bus
/// activation where it is installed so). When the service restarts, or the
/// registration is lost, the provider registers again by itself with the same
/// configuration: the delegate hears `providerDidReset` and then `providerDidBegin`.
///
/// Its registration lives on the bus connection's queue (`ProviderSession`); the methods may be
/// called from any thread.
///
/// An app that links MonkeyCallKit gains no periodic wake-up: the kit's tasks run on a serial
/// executor of its own, not on Swift concurrency's default one, whose first job starts
/// libdispatch's once-a-second monitor on Linux. The app's own tasks are its business; to stay
/// quiet when idle, give them a serial executor too (`SerialTaskExecutor`, `runMain`, in
/// `QueueExecutor`, which the MonkeyCallKit product includes).
public final class CXProvider: Sendable {
    /// The configuration the provider registers with (also on every re-registration).
    public let configuration: CXProviderConfiguration

    let serviceConnection: ServiceConnection?
    let connectionError: CXError?
    /// The registration and the actions in flight, on the service connection's queue.
    let session: ProviderSession?

    private let delegation = Mutex(Delegation())
    private static let orphanedCompletions = DispatchQueue(label: "MonkeyCallKit.provider.completions")

    private struct Delegation {
        weak var delegate: (any CXProviderDelegate)?
        var queue = DispatchQueue(label: "MonkeyCallKit.provider.delegate")
        /// The service said DidBegin while no delegate was set (it can, when the
        /// registration is quicker than the app's `setDelegate`): the next delegate hears it.
        var beganUnheard = false
    }

    /// Provider methods run one after the other, in the order the app called them.
    struct Job: Sendable {
        let member: String
        let arguments: [DBusValue]
        let completion: @Sendable (Result<[DBusValue], any Error>) -> Void
    }
    private let jobs: AsyncStream<Job>.Continuation

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
        session = serviceConnection.map { ProviderSession(serviceConnection: $0, configuration: configuration) }
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        jobs = continuation
        Task(executorPreference: serviceConnection?.tasks ?? SerialTaskExecutor.monkeyCallKit) { [weak self] in
            for await job in stream {
                guard let self else {
                    job.completion(.failure(CXError.invalidated))
                    continue
                }
                await self.run(job)
            }
        }
        session?.start(for: self)
    }

    deinit {
        jobs.finish()
    }

    // MARK: Delegate

    /// Sets the delegate and the queue its methods are called on (nil: a private serial queue).
    public func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?) {
        let delegate = UncheckedSendable(delegate)
        delegation.withLock {
            $0.delegate = delegate.value
            $0.queue = queue ?? DispatchQueue(label: "MonkeyCallKit.provider.delegate")
            if delegate.value != nil, $0.beganUnheard {
                $0.beganUnheard = false
                $0.queue.async { delegate.value?.providerDidBegin(self) }
            }
        }
    }

    /// `providerDidBegin`, kept for the next delegate when there is none yet.
    func deliverBegin() {
        delegation.withLock {
            let delegate = UncheckedSendable($0.delegate)
            guard delegate.value != nil else { $0.beganUnheard = true; return }
            $0.queue.async { delegate.value?.providerDidBegin(self) }
        }
    }

    /// Calls `body` with the delegate on the delegate's queue.
    func deliver(_ body: @escaping (any CXProviderDelegate) -> Void) {
        let (delegate, queue) = delegation.withLock { (UncheckedSendable($0.delegate), $0.queue) }
        guard let delegate = delegate.value else { return }
        let work = UncheckedSendable((delegate, body))
        queue.async { work.value.1(work.value.0) }
    }

    // MARK: Reporting

    /// Tells the service of a new incoming call; it rings unless refused
    /// (`CXErrorCodeIncomingCallError`). The completion runs on the delegate's queue.
    public func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        submit(API.reportNewIncomingCall, UUID, update.update) { [weak self] result in
            let error: (any Error)? = if case .failure(let error) = result { ErrorMapping.incoming(error) } else { nil }
            // A provider already gone: a serial queue, never a global one (see `SerialTaskExecutor.monkeyCallKit`).
            let queue = self?.delegation.withLock { $0.queue } ?? CXProvider.orphanedCompletions
            queue.async { completion(error) }
        }
    }

    /// Tells the service of a new incoming call; throws `CXErrorCodeIncomingCallError` when it is refused.
    public func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate) async throws {
        let result: Result<[DBusValue], any Error> = await withCheckedContinuation { continuation in
            submit(API.reportNewIncomingCall, UUID, update.update) { continuation.resume(returning: $0) }
        }
        if case .failure(let error) = result { throw ErrorMapping.incoming(error) }
    }

    /// Reports changed details of a call; properties the update did not set stay as they are.
    public func reportCall(with UUID: UUID, updated update: CXCallUpdate) {
        submit(API.reportCallUpdated, UUID, update.update)
    }

    /// Reports that a call ended for a reason other than the user's End action.
    public func reportCall(with UUID: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason) {
        submit(API.reportCallEnded, UUID, endedReason.apiName, APIValue.time(dateEnded))
    }

    /// Reports that an outgoing call started connecting (nil: now).
    public func reportOutgoingCall(with UUID: UUID, startedConnectingAt dateStartedConnecting: Date?) {
        submit(API.reportOutgoingCallStartedConnecting, UUID, APIValue.time(dateStartedConnecting))
    }

    /// Reports that an outgoing call connected (nil: now).
    public func reportOutgoingCall(with UUID: UUID, connectedAt dateConnected: Date?) {
        submit(API.reportOutgoingCallConnected, UUID, APIValue.time(dateConnected))
    }

    /// Ends the provider's calls as failed and removes it from the service; it does nothing more.
    public func invalidate() {
        guard let session else { return }
        session.enter { $0.beginInvalidating() }
        submit(API.invalidate) { [weak session] _ in
            session?.enter { $0.becomeInvalidated() }
        }
    }

    /// The provider's object path, once registered; throws when the service is not running.
    func registeredPath() async throws -> ObjectPath {
        guard let session else { throw connectionError ?? CXError.serviceNotRunning }
        return try await session.registeredPath()
    }

    /// The transactions whose actions the app has not completed yet.
    public var pendingTransactions: [CXTransaction] {
        guard let session else { return [] }
        return session.synchronously { $0.pendingTransactions }
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
        session?.enter { $0.pendingActions[actionUUID] = nil }
        var record = Telephony1.ActionInfo()
        record.date = date.map(APIValue.time)
        let info = record.entries
        submit(fulfilled ? API.fulfillAction : API.failAction, actionUUID, info)
    }
}
