import Dispatch

/// Where a store's heavy directory work runs: one job at a time, in the order the jobs were handed
/// over, whichever app they are for. The label bytes of every open update (copied out of the calls
/// that carried them and staged in a file, `StagedLabels`) and every `Complete` (applied and saved,
/// `DirectoryCompletion.run`) go through it, so that three apps pushing and completing at once are
/// one stream of work, not three beside the service's executor on two cores. Each job works in
/// slices that give way (`Pacer`), and nothing the executor does ever waits for the lane.
public final class DirectoryLane: Sendable {
    private let queue: DispatchQueue
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    public init(label: String = "org.monkeycall.directory-lane") {
        queue = DispatchQueue(label: label, qos: .utility)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// Whether the caller runs on this lane.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }

    /// Queues `work` behind everything handed over so far.
    func async(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `work` on the lane once everything handed over before it has run, and waits for it
    /// (at once when already on the lane). Never from the service's executor.
    func sync<T>(_ work: () throws(DirectoryError) -> T) throws(DirectoryError) -> T {
        if isCurrent { return try work() }
        let result: Result<T, DirectoryError> = queue.sync { Result { () throws(DirectoryError) in try work() } }
        return try result.get()
    }

    /// Waits until everything handed over so far has run.
    public func settle() {
        queue.sync {}
    }
}
