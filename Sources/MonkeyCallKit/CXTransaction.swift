import FoundationEssentials
import Synchronization

/// Actions requested together: the service accepts or refuses them as one
/// (CallKit's `CXTransaction`).
public final class CXTransaction: Sendable, CustomStringConvertible {
    private let state: Mutex<(uuid: UUID, actions: [CXAction])>

    public init(actions: [CXAction]) {
        state = Mutex((UUID(), actions))
    }

    public convenience init(action: CXAction) {
        self.init(actions: [action])
    }

    init(uuid: UUID, actions: [CXAction]) {
        state = Mutex((uuid, actions))
    }

    /// The transaction's identity; once requested, the UUID the service gave it.
    public internal(set) var uuid: UUID {
        get { state[\.uuid] }
        set { state[\.uuid] = newValue }
    }

    public var actions: [CXAction] { state[\.actions] }

    /// Whether every action is complete.
    public var isComplete: Bool { actions.allSatisfy(\.isComplete) }

    public func addAction(_ action: CXAction) {
        state.withLock { $0.actions.append(action) }
    }

    public var description: String { "CXTransaction \(uuid.uuidString.lowercased()) \(actions)" }
}
