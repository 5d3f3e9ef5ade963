import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The benchmark's results, printed as plain tables.
struct Report {
    /// The daemon measured, as the header names it: its command line and how it links the Swift runtime.
    let daemon: String
    let idle: IdleResult
    /// The same, once every other phase's calls have ended (before the memory phase).
    let idleAfterCalls: IdleResult
    let roundTrips: RoundTripResult
    let lifecycles: [LifecycleResult]
    let floor: FloorResult
    let subscribers: SubscriberCost.Result
    let notifications: NotificationLatency.Result
    let recents: RecentsResult
    let directory: DirectoryResult
    let stall: StallResult
    let lock: LockResult
    let memory: MemoryResult
    let contacts: ContactsPhase.Result

    /// Context switches of the idle daemon's threads by kind, with its RSS at the end of the window.
    private static func render(_ idle: IdleResult, title: String, when: String) -> [String] {
        var idling = Table([title, "threads", "context switches", "per minute"])
        for kind in idle.kinds {
            idling.add([kind.kind, "\(kind.threads)", "\(kind.switches)", fixed(Double(kind.switches) * 60 / idle.window.seconds, 1)])
        }
        idling.add(["all threads", "\(idle.kinds.reduce(0) { $0 + $1.threads })", "\(idle.total)", fixed(idle.perMinute, 1)])
        return idling.render() + ["(over \(fixed(idle.window.seconds, 0)) s \(when); target <= 5 per minute;"
                                  + " threads ended in the window: \(idle.threadsEnded); RSS at its end: \(mebibytes(idle.residentBytes)), target <= 24 MiB,"
                                  + " of which anonymous \(mebibytes(idle.anonymousBytes)))", ""]
    }

    /// The first lines of every report: what it measured, on which machine and when, and the daemon.
    static func header(_ title: String, daemon: String) -> [String] {
        ["MonkeyCall \(title): \(machine), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date().ISO8601Format())", "daemon: \(daemon)", ""]
    }

    func render() -> String {
        var lines = Self.header("benchmark", daemon: daemon)

        lines += Self.render(idle, title: "idle daemon: threads by kind", when: "with no call and no client, after 6 s settling")
        lines += Self.render(idleAfterCalls, title: "idle daemon after the calls", when: "once the calls of the phases above have ended")
        var trips = Table(["round trip", "count", "median µs", "p99 µs"])
        for (name, samples) in [("Peer.Ping", roundTrips.ping), ("Properties.Get(Manager, Version)", roundTrips.get)] {
            trips.add([name, "\(samples.sorted.count)", fixed(samples.median, 1), fixed(samples.percentile(99), 1)])
        }
        lines += trips.render() + ["(\(roundTrips.rounds) interleaved rounds after \(roundTrips.warmUp) warm-up calls of each)", ""]

        let ping = roundTrips.ping.median
        var calls = Table(["call lifecycles", "count", "seconds", "lifecycles/s", "µs each", "ratio to Ping"])
        for result in lifecycles {
            calls.add(["\(result.providers) provider\(result.providers == 1 ? "" : "s")", "\(result.count)", fixed(result.elapsed.seconds, 2),
                       fixed(result.perSecond, 1), fixed(result.microsecondsEach, 1), fixed(result.microsecondsEach / ping, 1)])
        }
        calls.add(["no-op peer, same messages (floor)", "\(floor.count)", fixed(floor.elapsed.seconds, 2), fixed(Double(floor.count) / floor.elapsed.seconds, 1),
                   fixed(floor.microsecondsEach, 1), fixed(floor.microsecondsEach / ping, 1)])
        lines += calls.render() + ["(µs each = wall time / count, one lifecycle in flight per provider; ratio = µs each / Ping median;",
                                   " 1 provider and the floor in alternating rounds of 25)", Self.floorRatio(lifecycles[0], floor), ""]

        lines += subscribers.render() + [""]
        lines += Self.renderNotifications(notifications) + [""]
        lines += ContactsPhase.render(contacts)

        var history = Table(["recents", "count", "median µs", "p99 µs", "ratio"])
        history.add(["Recents.List(50) over \(recents.rows) rows", "\(recents.list.sorted.count)", fixed(recents.list.median, 1),
                     fixed(recents.list.percentile(99), 1), fixed(recents.ratio, 2)])
        history.add(["Peer.Ping (same rounds)", "\(recents.ping.sorted.count)", fixed(recents.ping.median, 1), fixed(recents.ping.percentile(99), 1), ""])
        history.add(["Recents.List(50) again", "\(recents.pagedList.sorted.count)", fixed(recents.pagedList.median, 1),
                     fixed(recents.pagedList.percentile(99), 1), fixed(recents.floorRatio, 2)])
        history.add(["the same page from a no-op server (same rounds)", "\(recents.floor.sorted.count)", fixed(recents.floor.median, 1),
                     fixed(recents.floor.percentile(99), 1), ""])
        lines += history.render() + ["(ratio = median / Ping median in the same rounds, target <= 3; the no-op server is what libdbus and",
                                     " dbus-daemon cost for a page of 50 × 14 variants, whoever serves it: List / no-op = \(fixed(recents.floorRatio, 2)),"
                                     + " target <= \(fixed(Goals.recentsFloor, 2)))",
                                     "calls ended and recorded: \(recents.recorded) in \(fixed(recents.recordSeconds, 2)) s = \(fixed(recents.perSecond, 0)) entries/s", ""]

        var directoryTable = Table(["call directory (\(directory.entries) entries)", "value"])
        let incremental = directory.updates - 1
        directoryTable.add(["load through D-Bus, complete" + (incremental > 0 ? " + \(incremental) incremental update\(incremental == 1 ? "" : "s")" : ""),
                            fixed(directory.loadSeconds, 2) + " s"])
        directoryTable.add(["same bytes to a no-op (Peer.Ping)", fixed(directory.noopSeconds, 2) + " s"])
        directoryTable.add(["ratio no-op / load (target >= 0.5)", fixed(directory.loadRatio, 2)])
        directoryTable.add(["daemon RSS growth per entry", fixed(directory.bytesPerEntry, 1) + " bytes"])
        directoryTable.add(["Identify / Ping median", "\(fixed(directory.identify.median, 1)) / \(fixed(directory.ping.median, 1)) µs = \(fixed(directory.identify.median / directory.ping.median, 2)) (target <= \(fixed(Goals.identifyPing, 2)))"])
        directoryTable.add(["fresh daemon to a correct Identify (target < 0.5 s)", fixed(directory.startToIdentify, 3) + " s"])
        lines += directoryTable.render() + [""]
        lines += QueuePhase.render(stall, lock) + [""]

        var memory = Table(["daemon memory (VmRSS)", "value"])
        memory.add(["idle after start", mebibytes(self.memory.idle)])
        memory.add(["idle after \(fixed(idle.window.seconds, 0)) s more", mebibytes(idle.residentBytes)])
        memory.add(["before the memory phase", mebibytes(self.memory.before)])
        memory.add(["with \(self.memory.providers) providers", mebibytes(self.memory.withProviders)])
        memory.add(["with \(self.memory.providers) providers + \(self.memory.calls) ringing calls", mebibytes(self.memory.withCalls)])
        memory.add(["per provider", "\(Int(self.memory.bytesPerProvider.rounded())) bytes"])
        memory.add(["per ringing call", "\(Int(self.memory.bytesPerCall.rounded())) bytes"])
        lines += memory.render() + [""]

        lines.append("ratio Get/Ping: \(fixed(roundTrips.ratio, 2)) (target <= \(fixed(Goals.getPing, 2)))")
        return lines.joined(separator: "\n")
    }

    /// `uname -m`.
    /// The 1-provider lifecycles against their floor, alone (`--floor`).
    static func renderFloor(_ single: LifecycleResult, _ floor: FloorResult) -> [String] {
        var calls = Table(["call lifecycles", "count", "seconds", "lifecycles/s", "µs each"])
        calls.add(["1 provider", "\(single.count)", fixed(single.elapsed.seconds, 2), fixed(single.perSecond, 1), fixed(single.microsecondsEach, 1)])
        calls.add(["no-op peer, same messages (floor)", "\(floor.count)", fixed(floor.elapsed.seconds, 2), fixed(Double(floor.count) / floor.elapsed.seconds, 1),
                   fixed(floor.microsecondsEach, 1)])
        return calls.render() + ["(1 provider and the floor in alternating rounds of 25)", floorRatio(single, floor)]
    }

    static func renderNotifications(_ notifications: NotificationLatency.Result) -> [String] {
        var ringing = Table(["incoming call → Notify at the server", "count", "median µs", "p99 µs", "median / Ping (target <= 3)"])
        ringing.add(["ReportNewIncomingCall to Notify", "\(notifications.notify.sorted.count)", fixed(notifications.notify.median, 1),
                     fixed(notifications.notify.percentile(99), 1), fixed(notifications.ratio, 1)])
        ringing.add(["Peer.Ping (same rounds)", "\(notifications.ping.sorted.count)", fixed(notifications.ping.median, 1),
                     fixed(notifications.ping.percentile(99), 1), ""])
        if let floor = notifications.floor, let ratio = notifications.floorRatio {
            ringing.add(["the same from a no-op peer (floor, same rounds)", "\(floor.sorted.count)", fixed(floor.median, 1), fixed(floor.percentile(99), 1), ""])
            return ringing.render() + ["(one call at a time; each round a Ping, then the call, from a quiet daemon: the last call's notification closed, its Recents entry written;",
                                       " and a call to a peer that answers the report and calls Notify on the same server with the daemon's notification, before or after by turns)",
                                       "ReportNewIncomingCall → Notify / the no-op peer's: \(fixed(ratio, 2)) (target <= \(fixed(Goals.notifyFloor, 2)))"]
        }
        return ringing.render() + ["(one call at a time; each round a Ping, then the call, from a quiet daemon: the last call's notification closed, its Recents entry written)"]
    }

    private static func floorRatio(_ single: LifecycleResult, _ floor: FloorResult) -> String {
        "1-provider lifecycle / floor: \(fixed(single.microsecondsEach / floor.microsecondsEach, 2)) (target <= \(fixed(Goals.lifecycleFloor, 2))); the floor:"
            + " 4 requests and 2 FulfillAction, their replies and the \(floor.script.signalCount) signals the daemon sent for one lifecycle"
            + " (\(floor.script.signalNames.joined(separator: ", "))), replayed by a peer that does nothing else"
    }

    static var machine: String {
        var info = utsname()
        guard uname(&info) == 0 else { return "unknown" }
        return withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

func mebibytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) + " MiB" }

func milliseconds(_ microseconds: Double, _ digits: Int) -> String { fixed(microseconds / 1000, digits) + " ms" }

/// Columns padded to their widest cell: the first left-aligned, the others right-aligned.
struct Table {
    private var rows: [[String]]
    init(_ header: [String]) { rows = [header] }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> [String] {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
    }
}
