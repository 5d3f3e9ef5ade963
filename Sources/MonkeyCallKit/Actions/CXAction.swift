import DBus
import MonkeyCallAPI
import Foundation

/// Something the user asked for that the app performs: it calls `fulfill()`
/// when done or `fail()` when it cannot (CallKit's `CXAction`). An action
/// completes once; later calls do nothing, and so does completing an action
/// that already timed out.
public class CXAction: @unchecked Sendable, CustomStringConvertible {
    /// A new action's own; an action the service sends gets the service's
    /// (`ActionCoding`), before it is handed to anyone.
    public internal(set) var uuid = UUID()
    private let lock = NSLock()
    private var complete = false
    /// When the service gives up waiting for the app (its action timeout, 10 s by default).
    public let timeoutDate: Date
    /// The provider that received the action and reports its outcome.
    weak var performer: (any ActionPerformer)?
    /// The transaction the service dispatched the action in.
    var transactionUUID: UUID?

    init() {
        self.timeoutDate = Date(timeIntervalSinceNow: 10)
    }

    /// Whether the action was fulfilled, failed or timed out.
    public var isComplete: Bool { lock.withLock { complete } }

    /// Reports that the app performed the action.
    public func fulfill() { finish(fulfilled: true, at: nil) }

    /// Reports that the app could not perform the action.
    public func fail() { finish(fulfilled: false, at: nil) }

    /// Marks the action complete without telling anyone; true if it was not complete yet.
    @discardableResult
    func markComplete() -> Bool {
        lock.withLock {
            defer { complete = true }
            return !complete
        }
    }

    func finish(fulfilled: Bool, at date: Date?) {
        guard markComplete() else { return }
        performer?.complete(self, fulfilled: fulfilled, at: date)
    }

    public var description: String { "\(type(of: self)) \(uuid.uuidString.lowercased())" }
}

/// Whoever passes an action's outcome on to the service.
protocol ActionPerformer: AnyObject, Sendable {
    func complete(_ action: CXAction, fulfilled: Bool, at date: Date?)
}

/// An action on one call (CallKit's `CXCallAction`).
public class CXCallAction: CXAction, @unchecked Sendable {
    public let callUUID: UUID

    public init(call callUUID: UUID) {
        self.callUUID = callUUID
        super.init()
    }

    override public var description: String { "\(super.description) for call \(callUUID.uuidString.lowercased())" }
}
