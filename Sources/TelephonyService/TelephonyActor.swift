import Dispatch
import QueueExecutor

/// The one executor of all telephony state: the switchboard, the exported objects and the
/// observers of the switchboard's events are isolated to it, so the compiler checks that nothing
/// touches them from anywhere else.
///
/// Its executor is a serial dispatch queue, `queue`, and the service's D-Bus connection is driven
/// on that same queue (`TelephonyService` requires it). So a D-Bus handler, a reply, a name-owner
/// change or a timer already runs on the actor's executor: it enters the actor with
/// `assumeIsolated`, which checks that at run time, without a hop and without a task. One
/// process has one such executor: services started in the same process (as in-process tests
/// start them) share it.
@globalActor
public actor TelephonyActor {
    public static let shared = TelephonyActor()

    /// The queue behind the executor: the one to drive the service's connection on.
    public static var queue: DispatchQueue { executor.queue }

    private static let executor = QueueExecutor(queue: DispatchQueue(label: "org.monkeycall.telephony"))

    public nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }

    /// Runs `operation` isolated to the actor, from code that runs on `queue` but that the compiler
    /// cannot see does (a libdbus callback, a dispatch source's handler, a reply to a D-Bus call).
    /// Traps when not on `queue`.
    public static func assumeIsolated<T>(_ operation: @TelephonyActor () throws -> T) rethrows -> T {
        shared.preconditionIsolated("not on the telephony queue")
        // What `MainActor.assumeIsolated` does: the check above is what makes the call isolated.
        return try withoutActuallyEscaping(operation) { operation in
            try unsafeBitCast(operation, to: (() throws -> T).self)()
        }
    }
}

extension TelephonyActor {
    /// Whether this code runs on the actor's queue.
    public static var isOnQueue: Bool { executor.isOnQueue }

    /// Runs `operation` on the actor: at once when already on its queue, else soon, from any thread
    /// (a completion on another queue, a callback of libnotify's or GLib's thread).
    public static func enter(_ operation: @escaping @Sendable @TelephonyActor () -> Void) {
        if isOnQueue { assumeIsolated(operation) } else { queue.async { assumeIsolated(operation) } }
    }

    /// A callback for an API that calls it from any thread (libnotify's, on GLib's): each call
    /// enters the actor as `enter` does, with what it was called with.
    public static func entering<Argument: Sendable>(_ callback: @escaping @Sendable @TelephonyActor (Argument) -> Void) -> @Sendable (Argument) -> Void {
        { argument in enter { callback(argument) } }
    }

    /// A completion for an API that calls it on the actor's queue (a D-Bus reply, the database's
    /// results): it enters the actor there, and traps when called anywhere else.
    public static func onQueue<Argument: Sendable>(_ completion: @escaping @Sendable @TelephonyActor (Argument) -> Void) -> @Sendable (Argument) -> Void {
        { argument in assumeIsolated { completion(argument) } }
    }
}
