import Dispatch

/// A serial executor over a dispatch queue: each job runs on the queue, in order.
///
/// An actor whose executor this is keeps its state on the queue, and the compiler checks that
/// nothing else touches it. Code that already runs on the queue (a dispatch source's handler, a
/// completion the queue was given for) enters the actor with `assumeIsolated`, which checks at
/// run time that it is on the queue (`checkIsolated`), without a hop and without a task.
public final class QueueExecutor: SerialExecutor {
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) {
        self.queue = queue
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(queue))
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether this code runs on the queue.
    public var isOnQueue: Bool { DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(queue) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// What `assumeIsolated` and `preconditionIsolated` ask outside a task: being on the queue is
    /// being on this executor.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Runs `operation` isolated to `actor`, whose executor this is: at once when already on the
    /// queue, else soon, in order with the queue's other work.
    public func enter<A: Actor>(_ actor: A, _ operation: @escaping @Sendable (isolated A) -> Void) {
        if isOnQueue { actor.assumeIsolated(operation) } else { async(on: actor, operation) }
    }

    /// Runs `operation` isolated to `actor`, whose executor this is, on the queue: soon, or after
    /// `delay` seconds. Unlike a task, it keeps its place in the queue's order.
    public func async<A: Actor>(on actor: A, after delay: Double? = nil, _ operation: @escaping @Sendable (isolated A) -> Void) {
        let run: @Sendable () -> Void = { actor.assumeIsolated(operation) }
        if let delay { queue.asyncAfter(deadline: .now() + delay, execute: run) } else { queue.async(execute: run) }
    }
}
