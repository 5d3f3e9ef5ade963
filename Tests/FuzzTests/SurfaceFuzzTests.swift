import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The whole D-Bus surface, fuzzed by `monkeycall-fuzz` from two apps at once: one on the
/// host and one in a Flatpak-style bubblewrap sandbox (org.example.Fuzzer). Each drives every
/// method and property of the contract (from the typed specs) with extreme values, on its own
/// live objects (own calls ended or connected at 2^64−1, own actions fulfilled with such a
/// Date) as well as on another app's. Passes when the daemon never dies, every error is a
/// proper one, its memory stays under `rssBound`, and a whole call still goes through after.
@Suite("The whole D-Bus surface fuzzed from a host app and a sandboxed app", .serialized)
struct SurfaceFuzzTests {
    /// Calls of each fuzzer: `MONKEYCALL_FUZZ_SURFACE_CALLS`, else 10,000 (20,000 in all), or
    /// 500,000 each (1,000,000 in all) with `MONKEYCALL_FUZZ_LONG=1`.
    static var callsPerCaller: Int {
        ProcessInfo.processInfo.environment["MONKEYCALL_FUZZ_SURFACE_CALLS"].flatMap { Int($0) } ?? (FuzzSettings.long ? 500_000 : 10_000)
    }

    /// `MONKEYCALL_FUZZ_SURFACE_ARGS`: more options for both fuzzers, e.g. `--times-within-contract`
    /// to look past a known trap on times, or `--in-flight 16`.
    static var extraArguments: [String] {
        (ProcessInfo.processInfo.environment["MONKEYCALL_FUZZ_SURFACE_ARGS"] ?? "").split(separator: " ").map(String.init)
    }

    /// monkeycalld's resident memory, at its peak, under both fuzzers with 64 calls in flight
    /// each. A debug build measured 160–170 MiB peak here (1 MiB strings and 20,000-number
    /// arrays in flight, SQLite's caches), 60 MiB after; 256 MiB leaves room for a busy machine
    /// and fails a leak of a few hundred bytes per call on the long run. Under ThreadSanitizer its
    /// allocator and the shadow of every thread's accesses add to it (248–268 MiB measured).
    static let rssBound = (Deadlines.underThreadSanitizer ? 512 : 256) * 1024 * 1024

    @Test("every method and property, extreme values, own and foreign objects: no crash, proper errors only, bounded memory")
    func wholeSurface() async throws {
        let daemon = try await FuzzedDaemon()
        // Another app's objects to aim at: a provider with a ringing call and an open directory update.
        let victim = try await FuzzProvider(daemon, name: "Victim")
        defer { victim.connection.close() }
        let victimCall = try await victim.reportIncoming()
        guard case .objectPath(let victimUpdate)? = try await victim.call("BeginCallDirectoryUpdate", [.bool(true)]).first else {
            throw TestSupportError("no directory update for the victim")
        }
        let seed = FuzzSettings.seeds.first ?? 1
        let calls = Self.callsPerCaller
        let fuzzer = BuiltProducts.path("monkeycall-fuzz")
        let common = ["--calls", "\(calls)", "--in-flight", "64", "--foreign-path", victim.path.rawValue, "--foreign-path", victimUpdate.rawValue,
                      "--foreign-call", victimCall] + Self.extraArguments
        let sampler = MemorySampler(pid: daemon.daemon.pid)
        let started = ContinuousClock.now
        let host = try ChildProcess(fuzzer, common + ["--address", daemon.bus.address, "--seed", "\(seed)", "--caller", "host"])
        let sandboxed = try Sandbox.flatpak(appID: "org.example.Fuzzer", bus: daemon.bus, executable: fuzzer,
                                            common + ["--seed", "\(seed &+ 1)", "--caller", "org.example.Fuzzer"],
                                            readOnly: [BuiltProducts.directory.path, try await Self.swiftRuntimeDirectory(of: fuzzer)])
        let deadline: Duration = .seconds(FuzzSettings.long ? 4 * 3600 : 600)
        let hostStatus = await host.waitForExit(timeout: deadline)
        let sandboxedStatus = await sandboxed.waitForExit(timeout: deadline)
        let elapsed = ContinuousClock.now - started
        let peak = max(await sampler.stop(), Self.status(daemon.daemon.pid, "VmHWM") ?? 0)
        host.kill()
        sandboxed.kill()

        let results = [("host", host, hostStatus), ("org.example.Fuzzer", sandboxed, sandboxedStatus)].map { name, child, status in
            (name: name, status: status, result: Self.result(child.standardOutput), output: child.output)
        }
        // The daemon first: a crash names the calls that may have killed it.
        if !daemon.daemon.isRunning {
            let status = await daemon.daemon.waitForExit(timeout: .seconds(5)).map { $0 == 132 ? "132: SIGILL, a Swift trap" : "\($0)" } ?? "?"
            let killers = results.compactMap { run -> String? in
                guard let result = run.result, result["daemonGone"] as? Bool == true else { return nil }
                let suspects = (result["suspects"] as? [String] ?? []).prefix(12).joined(separator: "\n    ")
                let last = (result["lastCalls"] as? [String] ?? []).suffix(16).joined(separator: "\n    ")
                return "the \(run.name) fuzzer saw the service go after \(result["daemonGoneAfterCalls"] ?? "?") calls; most likely first:\n    \(suspects)\n  its last calls:\n    \(last)"
            }
            Issue.record("""
                monkeycalld died (status \(status)) under the surface fuzzer.
                \(killers.joined(separator: "\n"))
                monkeycalld said:
                \(Self.crashReport(daemon.daemon.output))
                """)
            return
        }
        for run in results {
            #expect(run.status != nil, "the \(run.name) fuzzer did not finish within \(deadline)")
            guard let result = run.result else {
                Issue.record("the \(run.name) fuzzer printed no result (status \(String(describing: run.status))): \(run.output.suffix(4000))")
                continue
            }
            let outcomes = result["outcomes"] as? [String: Int] ?? [:]
            let improper = outcomes.filter { $0.key != "reply" && !$0.key.hasPrefix("not sent") && !ProperErrors.isProper($0.key) }
            #expect(improper.isEmpty, "the \(run.name) fuzzer got errors no well-behaved service answers: \(improper); first of each: \(result["improperExamples"] ?? [:])")
            #expect((result["calls"] as? Int ?? 0) == calls, "the \(run.name) fuzzer sent \(result["calls"] ?? 0) of \(calls) calls")
            #expect(result["alive"] as? Bool == true, "the service did not answer Ping after the \(run.name) fuzzer")
            #expect((result["lostConnections"] as? [Int] ?? []).isEmpty, "the bus dropped the \(run.name) fuzzer's own connections: \(result["lostConnections"]!)")
            // Messages libdbus will not build: the bus drops their sender, and the service never sees them.
            let probes = result["probes"] as? [String: Int] ?? [:]
            #expect(probes.keys.contains { $0.hasPrefix("malformed UTF-8: dropped by the bus") }, "invalid UTF-8 from the \(run.name) fuzzer: \(probes)")
            // Big first messages of a new connection are refused at once by name, never waited on (issue 39).
            for probe in ["200,000-key a{sv}: ", "16 MiB string: "] {
                let said = probes.keys.first { $0.hasPrefix(probe) }.map { String($0.dropFirst(probe.count)) }
                #expect(said.map(ProperErrors.isProper) == true, "\(probe)from the \(run.name) fuzzer: \(said ?? "not sent")")
            }
            // One app's subscribers are bounded: some let in, the rest LimitsExceeded.
            let flood = probes.keys.first { $0.hasPrefix("24 subscribers at once: ") } ?? ""
            #expect(flood.contains("reply") && flood.contains("LimitsExceeded"), "the \(run.name) fuzzer's subscriber flood: \(flood)")
            print("surface fuzz, \(run.name): \(result["calls"] ?? 0) calls in \(result["seconds"] ?? 0) s (\(result["callsPerSecond"] ?? 0)/s)\n"
                  + outcomes.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "  \($0.value)\t\($0.key)" }.joined(separator: "\n")
                  + "\n" + probes.sorted { $0.key < $1.key }.map { "  probe \($0.value)\t\($0.key)" }.joined(separator: "\n"))
        }
        #expect(peak < Self.rssBound, "monkeycalld's RSS peaked at \(peak / 1_048_576) MiB (bound \(Self.rssBound / 1_048_576) MiB)")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("surface fuzz: \(calls * 2) calls in \(String(format: "%.1f", seconds)) s from two apps at once; monkeycalld peak RSS \(peak / 1_048_576) MiB")
        try await daemon.expectAlive("the surface fuzzer")
    }

    /// The fuzzer's `MONKEYCALL-FUZZ-RESULT {json}` line.
    static func result(_ output: String) -> [String: Any]? {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("MONKEYCALL-FUZZ-RESULT ") }) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line.dropFirst("MONKEYCALL-FUZZ-RESULT ".count).utf8))) as? [String: Any]
    }

    /// Where the fuzzer's Swift runtime is (it needs it in the sandbox), as `ldd` finds it.
    static func swiftRuntimeDirectory(of executable: String) async throws -> String {
        let ldd = try await ChildProcess.run("/usr/bin/ldd", [executable])
        guard let line = ldd.stdout.split(separator: "\n").first(where: { $0.contains("libswiftCore.so => ") }),
              let path = line.split(separator: " ").dropFirst(2).first else {
            throw TestSupportError("ldd finds no libswiftCore.so for \(executable): \(ldd.stdout)\(ldd.stderr)")
        }
        return URL(fileURLWithPath: String(path)).deletingLastPathComponent().path
    }

    /// A `kB` field of /proc/PID/status, in bytes.
    static func status(_ pid: Int32, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kB = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kB * 1024
    }

    /// The lines of a crash that say what and where: the fatal error and the crashed thread's top frames.
    static func crashReport(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        var report = lines.filter { $0.contains("Fatal error") || $0.contains("Program crashed") }.map(String.init)
        if let crashed = lines.firstIndex(where: { $0.hasPrefix("Thread ") && $0.hasSuffix(" crashed:") }) {
            report += lines[crashed..<min(lines.count, crashed + 14)].map { String($0.prefix(220)) }
        }
        return report.isEmpty ? String(output.suffix(3000)) : report.joined(separator: "\n")
    }
}

/// Samples a process's VmRSS every 50 ms until stopped; the peak seen.
final class MemorySampler: @unchecked Sendable {
    private let task: Task<Int, Never>

    init(pid: Int32) {
        task = Task {
            var peak = 0
            while !Task.isCancelled {
                guard let rss = SurfaceFuzzTests.status(pid, "VmRSS") else { break }
                peak = max(peak, rss)
                try? await Task.sleep(for: .milliseconds(50))
            }
            return peak
        }
    }

    func stop() async -> Int {
        task.cancel()
        return await task.value
    }
}
