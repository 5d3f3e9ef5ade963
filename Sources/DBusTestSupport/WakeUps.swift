import Foundation

/// How often a process woke up over a window, from /proc: the context switches of its threads
/// (voluntary and involuntary), and one more for each thread that started or ended meanwhile (a
/// thread's own switches die with it). An idle program that waits for events without a timeout
/// counts 0; libdispatch's worker-pool monitor alone counts about one a second.
public struct WakeUps: CustomStringConvertible, Sendable {
    /// The window the idle tests count over: an idle program wakes at most 3 times in it.
    public static let idleWindow: Duration = .seconds(30)
    /// What they wait first: libdispatch lets its idle worker threads go after 5 s.
    public static let settle: Duration = .seconds(6)

    public let window: Duration
    /// Switches by thread name, of the threads alive at both ends.
    public let switchesByThread: [String: Int]
    public let threadsStarted: Int
    public let threadsEnded: Int

    public var total: Int { switchesByThread.values.reduce(0, +) + threadsStarted + threadsEnded }

    public var description: String {
        let busy = switchesByThread.filter { $0.value > 0 }.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }
        return "\(total) in \(window) (\(busy.joined(separator: ", ")); threads started \(threadsStarted), ended \(threadsEnded))"
    }

    /// Counts `pid`'s wake-ups over `window`.
    public static func count(of pid: Int32, over window: Duration) async throws -> WakeUps {
        let before = try threads(of: pid)
        try await Task.sleep(for: window)
        let after = try threads(of: pid)
        var byName: [String: Int] = [:]
        for (tid, thread) in after {
            guard let earlier = before[tid] else { continue }
            byName["\(thread.name) (\(tid))", default: 0] += thread.switches - earlier.switches
        }
        return WakeUps(window: window, switchesByThread: byName,
                       threadsStarted: after.keys.count { before[$0] == nil }, threadsEnded: before.keys.count { after[$0] == nil })
    }

    private static func threads(of pid: Int32) throws -> [Int32: (name: String, switches: Int)] {
        let folder = "/proc/\(pid)/task"
        var result: [Int32: (name: String, switches: Int)] = [:]
        for entry in try FileManager.default.contentsOfDirectory(atPath: folder) {
            guard let tid = Int32(entry),
                  let name = try? String(contentsOfFile: "\(folder)/\(entry)/comm", encoding: .utf8),
                  let status = try? String(contentsOfFile: "\(folder)/\(entry)/status", encoding: .utf8) else { continue } // ended meanwhile
            result[tid] = (name.trimmingCharacters(in: .whitespacesAndNewlines), field("voluntary_ctxt_switches", status) + field("nonvoluntary_ctxt_switches", status))
        }
        return result
    }

    private static func field(_ name: String, _ status: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
