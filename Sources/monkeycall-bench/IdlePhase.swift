import Foundation

/// Context switches of one kind of thread of the idle daemon over the window.
struct ThreadKindWakeUps {
    let kind: String
    let threads: Int
    let switches: Int
}

struct IdleResult {
    let window: Duration
    let kinds: [ThreadKindWakeUps]
    /// Threads that ended during the window: their switches are not counted.
    let threadsEnded: Int
    let residentBytes: Int
    let anonymousBytes: Int
    var total: Int { kinds.reduce(0) { $0 + $1.switches } }
    var perMinute: Double { Double(total) * 60 / window.seconds }
}

/// What the daemon does when nothing happens: the context switches of each of
/// its threads (voluntary and involuntary, from /proc) over a window with no
/// call and no client, grouped by what the thread is, and its RSS at the end.
/// A thread that wakes up to do nothing shows here as switches; libdispatch's
/// manager thread, which runs libdispatch's worker-pool monitor every second
/// once any work has run on a global queue (see `SerialTaskExecutor`), shows
/// as such.
enum IdlePhase {
    static func measure(_ daemon: DaemonUnderTest, settle: Duration, window: Duration) async throws -> IdleResult {
        try await measure(pid: daemon.pid, settle: settle, window: window)
    }

    /// The same for any process of ours (the Phone app, its baseline window).
    static func measure(pid: Int32, settle: Duration, window: Duration) async throws -> IdleResult {
        // libdispatch lets worker threads left from the start go after a few seconds idle.
        try await Task.sleep(for: settle)
        let before = try threads(of: pid)
        try await Task.sleep(for: window)
        let after = try threads(of: pid)
        var kinds: [String: (threads: Int, switches: Int)] = [:]
        for (tid, thread) in after {
            let switches = thread.switches - (before[tid]?.switches ?? 0)
            kinds[thread.kind, default: (0, 0)].threads += 1
            kinds[thread.kind, default: (0, 0)].switches += switches
        }
        let ended = before.keys.filter { after[$0] == nil }.count
        return IdleResult(window: window,
                          kinds: kinds.map { ThreadKindWakeUps(kind: $0.key, threads: $0.value.threads, switches: $0.value.switches) }
                              .sorted { ($0.switches, $1.kind) > ($1.switches, $0.kind) },
                          threadsEnded: ended, residentBytes: try ProcStatus.bytes(pid, "VmRSS"), anonymousBytes: try ProcStatus.bytes(pid, "RssAnon"))
    }

    struct ThreadSample {
        let kind: String
        let switches: Int
    }

    /// The process's threads now, by thread id.
    static func threads(of pid: Int32) throws -> [Int32: ThreadSample] {
        let folder = "/proc/\(pid)/task"
        var result: [Int32: ThreadSample] = [:]
        for entry in try FileManager.default.contentsOfDirectory(atPath: folder) {
            guard let tid = Int32(entry),
                  let comm = try? String(contentsOfFile: "\(folder)/\(entry)/comm", encoding: .utf8),
                  let status = try? String(contentsOfFile: "\(folder)/\(entry)/status", encoding: .utf8) else { continue } // ended meanwhile
            let syscall = (try? String(contentsOfFile: "\(folder)/\(entry)/syscall", encoding: .utf8)) ?? ""
            result[tid] = ThreadSample(kind: kind(name: comm.trimmingCharacters(in: .whitespacesAndNewlines), syscall: syscall, isMain: tid == pid),
                                       switches: field("voluntary_ctxt_switches", status) + field("nonvoluntary_ctxt_switches", status))
        }
        return result
    }

    /// What a thread is, from its name and the system call it waits in.
    static func kind(name: String, syscall: String, isMain: Bool) -> String {
        if isMain { return "main thread (parked by dispatch_main)" }
        // libdispatch names its threads after the root queue's label, cut to 15 bytes ("…root.default-qos").
        if name.contains("qos") {
            // epoll_wait 232, epoll_pwait 281, epoll_pwait2 441 on x86_64: the manager's event loop.
            let number = syscall.split(separator: " ").first.flatMap { Int($0) }
            return [232, 281, 441].contains(number) ? "libdispatch manager (timers, fd sources)" : "libdispatch worker"
        }
        switch name {
        case "glib": return "our GLib loop (libnotify, GSettings)"
        case "gmain": return "GLib worker (gmain)"
        case "gdbus": return "GDBus worker (gdbus)"
        case "dconf worker": return "dconf worker"
        default: return name
        }
    }

    private static func field(_ name: String, _ status: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        return Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0
    }
}

/// A process's memory as /proc/PID/status tells it.
enum ProcStatus {
    /// `field` ("VmRSS", "RssAnon", "VmHWM") in bytes.
    static func bytes(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw BenchError("no \(field) in /proc/\(pid)/status (has the process exited?)")
        }
        return kilobytes * 1024
    }
}
