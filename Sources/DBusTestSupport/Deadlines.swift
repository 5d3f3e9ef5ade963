import Foundation

/// How long tests wait for an event before they give up. Under ThreadSanitizer (`scripts/test-tsan`,
/// which sets TSAN_OPTIONS) every process runs several times slower, so the deadlines stretch; a
/// test that passes still passes as soon as its event comes, so normal runs are unchanged.
public enum Deadlines {
    public static let scale: Int = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil ? 1 : 4

    /// Whether the processes under test run under ThreadSanitizer, whose runtime has a thread of
    /// its own that wakes now and then.
    public static var underThreadSanitizer: Bool { scale > 1 }

    public static func stretched(_ timeout: Duration) -> Duration { timeout * scale }

    /// One of the service's timeouts (the action timeout, 10 s; the ring timeout, 45 s) for a test
    /// that does not choose it: as it is, but stretched on the real clock under ThreadSanitizer (an
    /// app's answer takes as much longer as everything else does).
    public static func serviceTimeout(_ seconds: Double, manualClock: Bool = false) -> Double {
        manualClock ? seconds : seconds * Double(scale)
    }
}
