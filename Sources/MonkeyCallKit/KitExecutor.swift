import QueueExecutor

extension SerialTaskExecutor {
    /// Where MonkeyCallKit runs its own tasks (registering, following the service, delivering
    /// replies) when it has no bus connection; each `ServiceConnection` has one of its own
    /// (`tasks`), so that connections never wait for each other. Never Swift concurrency's
    /// default executor. On Linux the first job there
    /// starts libdispatch's worker-pool monitor, a timer that wakes the process every second for
    /// the rest of its life, and an app that only waits for calls must not wake a laptop.
    ///
    /// The app's own tasks are the app's business: a `Task {}` of its own, or `Task.sleep`, starts
    /// that monitor all the same. An app that wants to stay quiet gives its tasks an executor like
    /// this one (`Task(executorPreference:)`, or `SerialTaskExecutor.runMain` from a synchronous
    /// `main`), and its timers a serial queue's `asyncAfter`.
    static let monkeyCallKit = SerialTaskExecutor(label: "org.monkeycall.MonkeyCallKit")
}
