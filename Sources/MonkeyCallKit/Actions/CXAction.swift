import FoundationEssentials
import Synchronization

/// Something the user asked for that the app performs: it calls `fulfill()`
/// when done or `fail()` when it cannot (CallKit's `CXAction`). An action
/// completes once; later calls do nothing, and so does completing an action
/// that already timed out.
///
/// CallKit's actions are subclasses of `CXAction`; here the actions are final
/// classes that conform to it, so that the compiler checks that each is safe to
/// hand from thread to thread (a subclass cannot be). Their common state is their
/// `outcome`, which only MonkeyCallKit can make: no type outside it is an action.
public protocol CXAction: AnyObject, Sendable, CustomStringConvertible {
    /// The action's identity and completion, kept by MonkeyCallKit.
    var outcome: CXActionOutcome { get }
}

/// An action on one call (CallKit's `CXCallAction`). All the service's actions are.
public protocol CXCallAction: CXAction {
    var callUUID: UUID { get }
}

extension CXCallAction {
    /// The call the action is on, which its outcome holds.
    public var callUUID: UUID { outcome.callUUID }
}

extension CXAction {
    /// A new action's own; an action the service sends has the service's.
    public var uuid: UUID { outcome.uuid }
    /// When the service gives up waiting for the app (its action timeout, 10 s by default).
    public var timeoutDate: Date { outcome.timeoutDate }
    /// Whether the action was fulfilled, failed or timed out.
    public var isComplete: Bool { outcome.isComplete }

    /// Reports that the app performed the action.
    public func fulfill() { outcome.finish(fulfilled: true, at: nil) }

    /// Reports that the app could not perform the action.
    public func fail() { outcome.finish(fulfilled: false, at: nil) }

    public var description: String {
        let action = "\(type(of: self)) \(uuid.uuidString.lowercased())"
        guard let call = self as? any CXCallAction else { return action }
        return "\(action) for call \(call.callUUID.uuidString.lowercased())"
    }
}

/// What every action holds: its identity and its call's, whether it is complete, and who reports
/// its outcome.
public final class CXActionOutcome: Sendable {
    private struct State {
        var uuid = UUID()
        var complete = false
        /// The provider that received the action and reports its outcome.
        weak var performer: (any ActionPerformer)?
        /// The transaction the service dispatched the action in.
        var transactionUUID: UUID?
    }

    private let state = Mutex(State())
    let timeoutDate = Date(timeIntervalSinceNow: 10)
    let callUUID: UUID

    init(call callUUID: UUID) { self.callUUID = callUUID }

    var uuid: UUID { state.withLock { $0.uuid } }
    var isComplete: Bool { state.withLock { $0.complete } }
    var transactionUUID: UUID? { state.withLock { $0.transactionUUID } }

    /// Gives an action the service sent its ids, before it is handed to anyone.
    func received(uuid: UUID, transactionUUID: UUID?) {
        state.withLock { ($0.uuid, $0.transactionUUID) = (uuid, transactionUUID) }
    }

    /// The provider the action was delivered to, which reports its outcome.
    func deliver(to performer: any ActionPerformer) {
        state.withLock { $0.performer = performer }
    }

    /// Marks the action complete without telling anyone; true if it was not complete yet.
    @discardableResult
    func markComplete() -> Bool {
        state.withLock { state in
            defer { state.complete = true }
            return !state.complete
        }
    }

    func finish(fulfilled: Bool, at date: Date?) {
        guard markComplete() else { return }
        state.withLock { $0.performer }?.complete(actionUUID: uuid, fulfilled: fulfilled, at: date)
    }
}

/// Whoever passes an action's outcome on to the service.
protocol ActionPerformer: AnyObject, Sendable {
    func complete(actionUUID: UUID, fulfilled: Bool, at date: Date?)
}

/// An action the provider no longer holds, known by its ids only: one that timed out after
/// the provider was reset.
final class ForgottenCallAction: CXCallAction {
    let outcome: CXActionOutcome

    init(uuid: UUID, call callUUID: UUID) {
        outcome = CXActionOutcome(call: callUUID)
        outcome.received(uuid: uuid, transactionUUID: nil)
    }
}

extension Mutex where Value: Sendable {
    /// A lock around one value, read or replaced whole.
    var value: Value {
        get { withLock { $0 } }
        nonmutating set { withLock { $0 = newValue } }
    }

    /// One field of the value behind the lock, read or replaced.
    subscript<Field: Sendable>(_ field: WritableKeyPath<Value, Field>) -> Field {
        get { withLock { $0[keyPath: field] } }
        nonmutating set { withLock { $0[keyPath: field] = newValue } }
    }
}
