import Foundation

/// Actions requested together: the service accepts or refuses them as one
/// (CallKit's `CXTransaction`).
public final class CXTransaction: @unchecked Sendable, CustomStringConvertible {
    private let lock = NSLock()
    private var _uuid: UUID
    private var _actions: [CXAction]

    public init(actions: [CXAction]) {
        _uuid = UUID()
        _actions = actions
    }

    public convenience init(action: CXAction) {
        self.init(actions: [action])
    }

    init(uuid: UUID, actions: [CXAction]) {
        _uuid = uuid
        _actions = actions
    }

    /// The transaction's identity; once requested, the UUID the service gave it.
    public internal(set) var uuid: UUID {
        get { lock.withLock { _uuid } }
        set { lock.withLock { _uuid = newValue } }
    }

    public var actions: [CXAction] { lock.withLock { _actions } }

    /// Whether every action is complete.
    public var isComplete: Bool { actions.allSatisfy(\.isComplete) }

    public func addAction(_ action: CXAction) {
        lock.withLock { _actions.append(action) }
    }

    public var description: String { "CXTransaction \(uuid.uuidString.lowercased()) \(actions)" }
}
