import QueueExecutor

/// Work the app starts: `body` runs on the main actor, and what it awaits that belongs to no
/// actor (the D-Bus client's calls) runs on the app's serial executor. Never on Swift
/// concurrency's global executor, whose first job arms libdispatch's once-a-second worker-pool
/// monitor for the rest of the process (see `SerialTaskExecutor`): with plain `Task {}` an idle
/// Phone window woke once a second for good (`monkeycall-bench --phone`).
public enum AppTask {
    @discardableResult
    public static func start(_ body: @escaping @MainActor @Sendable () async -> Void) -> Task<Void, Never> {
        Task(executorPreference: SerialTaskExecutor.shared) { await body() }
    }
}
