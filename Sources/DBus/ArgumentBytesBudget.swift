/// How many bytes of arguments each account (`Caller.account`: an app, a process, as the access
/// policy says) may send: a leaky bucket of `burst` bytes that drains `perSecond` (unbounded until
/// `ObjectServer.limitArgumentBytesPerAccount`). Every call's body must be
/// read off the socket before the calls behind it, whoever sent them, so an app that keeps
/// sending big calls (each refused, or not) held everyone's calls for seconds. Past its bucket,
/// an account's calls are refused (LimitsExceeded) before anything of them is decoded or copied,
/// until the bucket has drained below `burst`. The service's bucket holds a real app's biggest
/// traffic, a whole call directory (64 MiB of labels and their numbers).
struct ArgumentBytesBudget {
    let burst: Int
    let perSecond: Int

    init(burst: Int = .max, perSecond: Int = 0) {
        self.burst = burst
        self.perSecond = perSecond
    }
    /// Bodies smaller than this are not counted: the bucket is for the big ones, and the common
    /// small call then costs no lookup.
    static let counted = 64 << 10
    /// Accounts kept at most; drained ones are forgotten first.
    static let maximumAccounts = 1024

    private struct Level {
        var bytes: Int
        var at: ContinuousClock.Instant
        /// The level at `now`, drained since `at`.
        func drained(_ perSecond: Int, to now: ContinuousClock.Instant) -> Int {
            let elapsed = now - at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return max(0, bytes - Int(min(seconds * Double(perSecond), Double(Int.max / 2))))
        }
    }
    private var levels: [String: Level] = [:]

    /// LimitsExceeded when `account` has sent more than its bucket holds; nil lets its call through.
    /// `now` is read only for an account with a level (the clock is read for no small call).
    func refusal(of account: String, now: @autoclosure () -> ContinuousClock.Instant) -> DBusError? {
        guard !levels.isEmpty, let level = levels[account] else { return nil }
        let bytes = level.drained(perSecond, to: now())
        guard bytes > burst else { return nil }
        guard perSecond > 0 else { return DBusError.limitsExceeded("calls from \(account) took more than \(burst >> 20) MiB on the wire") }
        let wait = (bytes - burst) / perSecond + 1
        return DBusError.limitsExceeded("calls from \(account) took more than \(burst >> 20) MiB on the wire lately (\(perSecond >> 20) MiB a second); try again in \(wait) s")
    }

    mutating func charge(_ account: String, _ bytes: Int, now readNow: @autoclosure () -> ContinuousClock.Instant) {
        guard bytes >= Self.counted, burst != .max else { return }
        let now = readNow()
        let before = levels[account]?.drained(perSecond, to: now) ?? 0
        levels[account] = Level(bytes: before + bytes, at: now)
        if levels.count > Self.maximumAccounts {
            levels = levels.filter { $0.value.drained(perSecond, to: now) > 0 }
            // Still full of accounts that sent a lot: the oldest levels go first.
            while levels.count > Self.maximumAccounts, let oldest = levels.min(by: { $0.value.at < $1.value.at }) { levels[oldest.key] = nil }
        }
    }
}
