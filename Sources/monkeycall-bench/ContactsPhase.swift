import AddressBook
import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI

/// The user's address book in the daemon (issue 30), on daemons of their own:
/// - how long a daemon given a vCard folder of 10,000 contacts (`--contacts`) takes from its
///   start until the last of them names a caller (`Identify`), against the time it takes its name;
/// - `ReportNewIncomingCall → Notify` with the caller among those 10,000 contacts, against the same
///   calls to a daemon without contacts, in alternating rounds (target ≤ 1.1×);
/// - the idle RSS of a daemon with 1,000 contacts against one with none, both fresh, and of the
///   helper that reads GNOME's address books (running when evolution-data-server is installed).
enum ContactsPhase {
    struct Result {
        let contacts: Int
        /// From the daemon's start: its name taken; the last contact answering Identify.
        let nameSeconds: Double
        let indexedSeconds: Double
        let with: NotificationLatency.Result
        let without: NotificationLatency.Result
        var ratio: Double { with.notify.median / without.notify.median }
        let idleWithout: Int
        let idleWithThousand: Int
        /// The RSS of the daemon's helper processes (monkeycall-contacts), with 1,000 contacts.
        let helperBytes: Int?
    }

    static func measure(executable: String, options: [String], contacts: Int, rounds: Int, perRound: Int) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-bench-contacts-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SampleContacts.writeVCards(count: contacts, to: folder + "/many")
        try SampleContacts.writeVCards(count: 1000, to: folder + "/thousand")
        try FileManager.default.createDirectory(atPath: folder + "/none", withIntermediateDirectories: true)

        // Index time: from the start of the process. The test buses' catalogs are compiled (msgfmt,
        // once a process) before, not in the time: the first bus of a run compiles them, and in a
        // run of this phase alone that was 0.3 s of "start to the name taken".
        _ = Catalogs.directory
        let started = ContinuousClock.now
        let with = try await DaemonUnderTest.start(executable: executable, options: options + ["--contacts", folder + "/many"])
        let named = ContinuousClock.now
        do {
            try await waitForContact(contacts - 1, on: with, timeout: .seconds(120))
        } catch {
            await with.stop()
            throw error
        }
        let indexed = ContinuousClock.now
        let without: DaemonUnderTest
        do {
            without = try await DaemonUnderTest.start(executable: executable, options: options + ["--contacts", folder + "/none"])
        } catch {
            await with.stop()
            throw error
        }

        // The same callers to both: with contacts each is named "Contact n", without each shows its number.
        let handle = { (index: Int) in "+\(SampleContacts.number(index * 37 % contacts))" }
        var withNotify: [Double] = [], withPing: [Double] = [], withoutNotify: [Double] = [], withoutPing: [Double] = []
        do {
            for round in 0..<rounds {
                for contacted in round % 2 == 0 ? [true, false] : [false, true] {
                    if contacted {
                        let result = try await NotificationLatency.measure(address: with.address, count: perRound, handle: handle) {
                            "Contact \($0 * 37 % contacts)"
                        }
                        withNotify += result.notify.sorted
                        withPing += result.ping.sorted
                    } else {
                        let result = try await NotificationLatency.measure(address: without.address, count: perRound, handle: handle)
                        withoutNotify += result.notify.sorted
                        withoutPing += result.ping.sorted
                    }
                }
            }
        } catch {
            await with.stop()
            await without.stop()
            throw error
        }
        await with.stop()
        await without.stop()

        // Idle RSS, fresh daemons: none against 1,000 contacts.
        let none = try await DaemonUnderTest.start(executable: executable, options: options + ["--contacts", folder + "/none"])
        let thousand: DaemonUnderTest
        do {
            thousand = try await DaemonUnderTest.start(executable: executable, options: options + ["--contacts", folder + "/thousand"])
            try await waitForContact(999, on: thousand, timeout: .seconds(60))
        } catch {
            await none.stop()
            throw error
        }
        try await Task.sleep(for: .seconds(3))
        let idleWithout = try none.residentBytes(), idleWithThousand = try thousand.residentBytes()
        let helpers = children(of: thousand.pid).compactMap { residentBytes(of: $0) }
        await none.stop()
        await thousand.stop()
        return Result(contacts: contacts, nameSeconds: (named - started).seconds, indexedSeconds: (indexed - started).seconds,
                      with: .init(notify: Samples(withNotify), ping: Samples(withPing)),
                      without: .init(notify: Samples(withoutNotify), ping: Samples(withoutPing)),
                      idleWithout: idleWithout, idleWithThousand: idleWithThousand, helperBytes: helpers.isEmpty ? nil : helpers.reduce(0, +))
    }

    /// Polls `Identify` (every 2 ms) until contact `n` names its number.
    private static func waitForContact(_ n: Int, on daemon: DaemonUnderTest, timeout: Duration) async throws {
        let connection = try Connection(address: daemon.address)
        defer { connection.close() }
        let deadline = ContinuousClock.now + timeout
        while true {
            let (label, _) = try await connection.telephony(Telephony1.CallDirectory.identify, "+\(SampleContacts.number(n))")
            if label == "Contact \(n)" { return }
            guard ContinuousClock.now < deadline else { throw BenchError("contact \(n) was not indexed within \(timeout)\(daemon.outputNote)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The processes any of the daemon's threads started (the helper is spawned from the address book's queue).
    private static func children(of pid: Int32) -> [Int32] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.flatMap { thread in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    private static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kilobytes * 1024
    }

    static func render(_ result: Result) -> [String] {
        var table = Table(["the address book (\(result.contacts) contacts in a vCard folder)", "count", "median µs", "p99 µs", "ratio"])
        table.add(["ReportNewIncomingCall to Notify, the caller a contact", "\(result.with.notify.sorted.count)", fixed(result.with.notify.median, 1),
                   fixed(result.with.notify.percentile(99), 1), fixed(result.ratio, 2)])
        table.add(["the same calls to a daemon without contacts", "\(result.without.notify.sorted.count)", fixed(result.without.notify.median, 1),
                   fixed(result.without.notify.percentile(99), 1), ""])
        table.add(["Peer.Ping (same rounds: with / without)", "\(result.with.ping.sorted.count)",
                   fixed(result.with.ping.median, 1) + " / " + fixed(result.without.ping.median, 1), "", ""])
        var lines = table.render()
        lines.append("(ratio = with / without contacts, target <= 1.1; the two daemons in alternating rounds, one call at a time)")
        lines.append("start to the name taken: \(fixed(result.nameSeconds, 3)) s; start to all \(result.contacts) contacts indexed (the last one named by Identify): "
                     + "\(fixed(result.indexedSeconds, 3)) s")
        lines.append("idle RSS, fresh daemons: no contacts \(mebibytes(result.idleWithout)), 1,000 contacts \(mebibytes(result.idleWithThousand))"
                     + (result.helperBytes.map { "; its monkeycall-contacts helper (GNOME's address books) \(mebibytes($0))" } ?? "; no helper running"))
        return lines + [""]
    }
}
