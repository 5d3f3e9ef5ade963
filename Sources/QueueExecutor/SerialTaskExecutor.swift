import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Runs Swift concurrency jobs one at a time on a serial dispatch queue: the executor a
/// long-running program gives its tasks (`Task(executorPreference:)`) so that it stays quiet
/// when idle.
///
/// Why not the default executor: on Linux, Swift concurrency's global executor runs jobs on
/// libdispatch's non-overcommit root queues, and the first worker thread of those starts
/// libdispatch's worker-pool monitor (swift-corelibs-libdispatch `src/event/workqueue.c`,
/// `_dispatch_workq_init_once`): a timer on the manager thread that fires every second for
/// the rest of the process, whether or not anything runs. A serial queue's workers come from
/// the overcommit pool, which the monitor does not watch, so a process whose tasks all run
/// here (child tasks inherit the preference; an unstructured `Task {}` and `Task.sleep` do
/// not, and must not be used) never arms that timer. `IdleTests` holds the daemon to it.
public final class SerialTaskExecutor: TaskExecutor {
    /// The process's executor for its tasks.
    public static let shared = SerialTaskExecutor(label: "org.monkeycall.tasks")

    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension SerialTaskExecutor {
    /// Runs a program's work as its main task on `shared`, with the main thread parked in
    /// `dispatchMain()`, and exits with status 0 when `body` returns (`body` exits by itself
    /// otherwise). What a long-running program calls from a synchronous `static func main()`
    /// instead of an async `main`, whose task starts on Swift concurrency's global executor and
    /// with it the once-a-second worker-pool monitor.
    public static func runMain(_ body: sending @escaping () async -> Void) -> Never {
        Task(executorPreference: shared) {
            await body()
            exit(0)
        }
        dispatchMain()
    }
}
