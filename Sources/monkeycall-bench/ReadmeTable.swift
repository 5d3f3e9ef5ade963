import Foundation

/// The README's table of figures, made from one run (`--readme-table`, which `scripts/bench-table`
/// puts into the README): every row from this run's report, none edited by hand.
extension Report {
    func readmeTable(build: String) -> String {
        let ping = roundTrips.ping.median
        let single = lifecycles[0]
        let many = lifecycles.dropFirst().last
        func ms(_ microseconds: Double) -> String { fixed(microseconds / 1000, 2) + " ms" }
        func count(_ value: Int) -> String { value.formatted(.number.grouping(.automatic)).replacingOccurrences(of: "\u{202F}", with: ",") }
        func met(_ ok: Bool) -> String { ok ? "" : ": **not met**" }
        /// A goal of at most `goal`: nothing when met, else by how much it is missed and a link to why.
        func within(_ value: Double, _ goal: Double, why anchor: String) -> String {
            value <= goal ? "" : ": **not met**, \(fixed((value / goal - 1) * 100, 0)) % over, [why](docs/performance.md#\(anchor))"
        }
        var rows: [(String, String)] = []
        rows.append(("idle: context switches of all threads with no call",
                     "\(idle.total) in \(fixed(idle.window.seconds, 0)) s after start, \(idleAfterCalls.total) once every call has ended (target ≤ 5 a minute)"))
        rows.append(("`Properties.Get(Version)` / Ping median",
                     "\(fixed(roundTrips.get.median, 1)) / \(fixed(ping, 1)) µs = \(fixed(roundTrips.ratio, 2)) (target ≤ \(fixed(Goals.getPing, 2))\(within(roundTrips.ratio, Goals.getPing, why: "why-identify-and-get-miss")))"))
        rows.append(("call lifecycles (report, answer, fulfil, end, fulfil)",
                     "\(fixed(single.perSecond, 0))/s with 1 provider (\(ms(single.microsecondsEach)) each)"
                     + (many.map { ", \(fixed($0.perSecond, 0))/s with \($0.providers)" } ?? "")))
        let floorRatio = single.microsecondsEach / floor.microsecondsEach
        rows.append(("one provider's lifecycle / the same messages from a no-op peer ([the floor](docs/performance.md#the-lifecycle-floor))",
                     "\(ms(single.microsecondsEach)) / \(ms(floor.microsecondsEach)) = \(fixed(floorRatio, 2)) (target ≤ \(fixed(Goals.lifecycleFloor, 2))\(within(floorRatio, Goals.lifecycleFloor, why: "why-the-lifecycle-misses")))"))
        rows.append(("a lifecycle with \(subscribers.subscribers) subscribers / with none",
                     "\(ms(subscribers.with.microsecondsEach)) / \(ms(subscribers.without.microsecondsEach)) = \(fixed(subscribers.ratio, 2)); "
                     + "/ a no-op peer sending the same copies to \(subscribers.subscribers): \(ms(subscribers.floor.microsecondsEach)), \(fixed(subscribers.floorRatio, 2)) "
                     + "(target ≤ \(fixed(Goals.subscribersFloor, 2))\(within(subscribers.floorRatio, Goals.subscribersFloor, why: "why-the-lifecycle-misses")))"))
        rows.append(("`ReportNewIncomingCall` → `Notify` at the server",
                     "median \(fixed(notifications.notify.median, 0)) µs, p99 \(ms(notifications.notify.percentile(99))): "
                     + "\(fixed(notifications.ratio, 1)) × Ping (target ≤ 3\(within(notifications.ratio, 3, why: "why-notify-misses")))"
                     + (notifications.floorRatio.map { "; \(fixed($0, 2)) × a no-op peer calling Notify itself (target ≤ \(fixed(Goals.notifyFloor, 2))\(within($0, Goals.notifyFloor, why: "why-notify-misses")))" } ?? "")))
        rows.append(("`Recents.List(50)` over \(count(recents.rows)) rows / Ping",
                     "\(ms(recents.list.median)) = \(fixed(recents.ratio, 1)) × (target ≤ 3\(within(recents.ratio, 3, why: "recents-pages-against-ping"))); "
                     + "\(fixed(recents.floorRatio, 2)) × the same page from a no-op server "
                     + "(target ≤ \(fixed(Goals.recentsFloor, 2))\(within(recents.floorRatio, Goals.recentsFloor, why: "recents-pages-against-ping")))"))
        rows.append(("calls ended and recorded in Recents", "\(fixed(recents.perSecond, 0))/s (one provider, sequential)"))
        let incremental = directory.updates - 1
        rows.append(("\(count(directory.entries)) directory entries through D-Bus",
                     "\(fixed(directory.loadSeconds, 2)) s in \(directory.updates) update\(directory.updates == 1 ? "" : "s")"
                     + (incremental > 0 ? " (one complete, \(incremental) incremental, each within the 64 MiB of labels)" : "")
                     + ": \(fixed(directory.loadRatio, 2)) × the speed of a no-op taking the same bytes (target ≥ 0.5\(met(directory.loadRatio >= 0.5)))"))
        rows.append(("directory memory", "\(fixed(directory.bytesPerEntry, 1)) bytes of daemon RSS per entry (the entries live in a memory-mapped file)"))
        let identifyRatio = directory.identify.median / directory.ping.median
        rows.append(("`Identify` / Ping median",
                     "\(fixed(directory.identify.median, 1)) / \(fixed(directory.ping.median, 1)) µs = \(fixed(identifyRatio, 2)) (target ≤ \(fixed(Goals.identifyPing, 2))\(within(identifyRatio, Goals.identifyPing, why: "why-identify-and-get-miss")))"))
        rows.append(("fresh daemon to a correct `Identify` over \(count(directory.entries)) entries",
                     "\(fixed(directory.startToIdentify, 3)) s (target < 0.5 s\(met(directory.startToIdentify < 0.5)))"))
        rows.append(("address book: ring with \(count(contacts.contacts)) contacts / none; start to all answerable",
                     "\(fixed(contacts.with.notify.median, 0)) / \(fixed(contacts.without.notify.median, 0)) µs = \(fixed(contacts.ratio, 2)) "
                     + "(target ≤ \(fixed(Goals.contactsRing, 2))\(within(contacts.ratio, Goals.contactsRing, why: "why-the-contacts-ring-and-the-stall-vary"))); \(fixed(contacts.indexedSeconds, 2)) s"))
        rows.append(("daemon RSS",
                     "\(mebibytes(memory.idle)) idle with \(count(recents.rows)) calls in Recents (target ≤ 24 MiB\(met(memory.idle <= 24 << 20))); "
                     + "\(mebibytes(contacts.idleWithout)) / \(mebibytes(contacts.idleWithThousand)) fresh with no / 1,000 contacts"
                     + (contacts.helperBytes.map { " (and \(mebibytes($0)) in the `monkeycall-contacts` helper)" } ?? "")
                     + "; \(mebibytes(memory.before)) after the other phases; \(fixed(memory.bytesPerProvider / 1024, 1)) KiB per provider, "
                     + "\(fixed(memory.bytesPerCall / 1024, 1)) KiB per ringing call"))
        rows.append(("slowest `Properties.Get` while a \(count(stall.entries))-entry directory is saved / idle median",
                     "\(fixed(stall.ratio, 1)) × (target ≤ 20\(within(stall.ratio, 20, why: "why-the-contacts-ring-and-the-stall-vary")); p99 \(ms(stall.during.percentile(99))))"))
        rows.append(("Recents locked by another process for \(fixed(lock.lockSeconds, 0)) s",
                     "\(count(lock.callsDuringLock)) lifecycles complete meanwhile; the calls ended then are recorded "
                     + (lock.lastAfterUnlock.map { "within \(fixed($0 * 1000, 0)) ms of the unlock" } ?? "**not all** within \(fixed(LockResult.patience, 0)) s of the unlock")))

        var lines = ["Made by `scripts/bench-table` from one run of `monkeycall-bench`: build \(build), \(Self.machine), "
                     + "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(Self.cpuModel), \(Date().ISO8601Format()).", "",
                     "| figure | value |", "| --- | --- |"]
        lines += rows.map { "| \($0.0) | \($0.1) |" }
        return lines.joined(separator: "\n")
    }

    /// The CPU's model name, from /proc/cpuinfo.
    static var cpuModel: String {
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
              let colon = line.firstIndex(of: ":") else { return "unknown CPU" }
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
}
