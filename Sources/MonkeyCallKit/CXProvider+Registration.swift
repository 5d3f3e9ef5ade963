import DBus
import Foundation
import MonkeyCallAPI

/// Registering with the service, and again whenever it comes back.
extension CXProvider {
    func start() {
        guard let serviceConnection else { return }
        Task(executorPreference: serviceConnection.tasks) { [weak self] in
            await serviceConnection.ready()
            guard let self else { return }
            let subscription = try? await serviceConnection.connection.subscribe(MatchRule(interface: Telephony1.Provider.interface)) { [weak self] message in
                self?.receive(message)
            }
            let removals = MatchRule(sender: Telephony1.busName, path: Telephony1.rootPath,
                                     interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
            let removalSubscription = try? await serviceConnection.connection.subscribe(removals) { [weak self] message in
                guard case .objectPath(let path)? = try? message.arguments().first else { return }
                self?.objectRemoved(path)
            }
            serviceConnection.addOwnerListener(self) { [weak self] old, new in self?.ownerChanged(from: old, to: new) }
            serviceConnection.connection.onQueue {
                guard !self.isInvalidating else { return self.setRegistering(false) }
                self.signalSubscription = subscription
                self.removalSubscription = removalSubscription
                self.register()
            }
        }
    }

    /// On the queue.
    func register() {
        guard let serviceConnection else { return }
        state = .registering
        setRegistering(true)
        retryRegistration = false
        // The reply is taken on the connection's queue, not in a Task: an app whose tasks keep Swift
        // concurrency's threads busy would otherwise hold up its own registration.
        serviceConnection.connection.call(Telephony1.Manager.registerProvider, destination: Telephony1.busName,
                             path: Telephony1.rootPath, configuration.entries) { [weak self] result in
            switch result {
            case .success(let path): self?.registered(at: path)
            case .failure(let error): self?.registrationFailed(error)
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

    /// On the queue: the service's name changed hands.
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

    /// On the queue: an object of the service went away. When it is this
    /// provider's, the registration was lost while the service runs on.
    func objectRemoved(_ path: ObjectPath) {
        guard !isInvalidating, case .registered(let mine) = state, mine == path else { return }
        reset()
        register()
    }

    /// On the queue: drops the actions in flight and tells the app to drop its calls.
    func reset() {
        let actions = pendingActions.values
        pendingActions = [:]
        actions.forEach { $0.outcome.markComplete() }
        deliver { $0.providerDidReset(self) }
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
        guard let serviceConnection else { throw connectionError ?? CXError.serviceNotRunning }
        return try await withCheckedThrowingContinuation { continuation in
            serviceConnection.connection.onQueue {
                switch self.state {
                case .registered(let path): continuation.resume(returning: path)
                case .starting, .registering: self.pathWaiters.append(continuation)
                case .unavailable(let error): continuation.resume(throwing: error)
                case .invalidated: continuation.resume(throwing: CXError.invalidated)
                }
            }
        }
    }
}
