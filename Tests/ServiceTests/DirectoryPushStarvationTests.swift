import DBus
import DBusTestSupport
import Foundation
import Glibc
import MonkeyCallAPI
import Testing

/// Directory pushes of several sandboxed apps at once (issue 53, probe finding #5): the real
/// monkeycalld, three Flatpak-like apps (bubblewrap, each behind Flatpak's own xdg-dbus-proxy)
/// each pushing the most labels an update may hold, then completing, while a host app's whole
/// calls are timed against a daemon nobody pushes to, and the daemon's peak memory is read.
@Suite("Directory pushes of several apps at once: calls go on, memory stays bounded")
struct DirectoryPushStarvationTests {
    /// A sandboxed app that registers a provider, opens a complete directory update and builds
    /// `batches` batches of `perBatch` identification entries with labels of `labelBytes` bytes;
    /// says "ready", waits until the FIFO at argv[1] has a writer (the test's start line, for all
    /// pushers at once), says "pushing", adds every batch and completes. Then "done", how long it
    /// took and what each step answered ("ok" or the error's name), and it waits to be killed.
    static let pusher = """
        import dbus, json, os, signal, sys, time
        fifo, name, batches, per_batch, label_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        S, ROOT = "org.monkeycall.Telephony1", "/org/monkeycall/Telephony1"
        bus = dbus.SessionBus()
        provider = bus.call_blocking(S, ROOT, S + ".Manager", "RegisterProvider", "a{sv}", ({"Name": name},))
        update = bus.call_blocking(S, provider, S + ".Provider", "BeginCallDirectoryUpdate", "b", (False,))
        label = "L" * label_bytes
        first = 14_085_550_000_000
        work = [(dbus.Array(range(first + b * per_batch, first + (b + 1) * per_batch), signature="x"),
                 dbus.Array([label] * per_batch, signature="s")) for b in range(batches)]
        print("ready", flush=True)
        os.close(os.open(fifo, os.O_RDONLY))  # returns once the test holds the FIFO open for writing
        print("pushing", flush=True)
        tally = {}
        def outcome(step, call):
            try:
                call()
                result = "ok"
            except dbus.exceptions.DBusException as error:
                result = error.get_dbus_name().split(".")[-1]
            tally.setdefault(step, {}).setdefault(result, 0)
            tally[step][result] += 1
        start = time.monotonic()
        for numbers, labels in work:
            outcome("batch", lambda: bus.call_blocking(S, update, S + ".CallDirectoryUpdate", "AddIdentificationEntries", "axas",
                                                       (numbers, labels), timeout=600))
        del work
        outcome("complete", lambda: bus.call_blocking(S, update, S + ".CallDirectoryUpdate", "Complete", "", (), timeout=600))
        print("done in %.2f s" % (time.monotonic() - start), json.dumps(tally, sort_keys=True), flush=True)
        while True:
            signal.pause()
        """

    /// A sandboxed app behind its own xdg-dbus-proxy, running `pusher`.
    struct Pusher {
        let proxy: ChildProcess
        let app: ChildProcess

        init(appID: String, bus: PrivateBus, startLine: String, batches: Int, perBatch: Int, labelBytes: Int) async throws {
            let started = try await Sandbox.proxy(appID: appID, bus: bus, talk: [Telephony1.busName])
            proxy = started.process
            app = try Sandbox.flatpak(appID: appID, bus: bus, executable: "/usr/bin/python3",
                                      ["-c", DirectoryPushStarvationTests.pusher, startLine, appID, "\(batches)", "\(perBatch)", "\(labelBytes)"],
                                      readOnly: [startLine], socket: started.socket)
        }

        func kill() {
            app.kill()
            proxy.kill()
        }

        var isDone: Bool { app.standardOutput.contains("done in") }
        /// Its "done" line: how long it took, and what each step answered.
        var result: String { app.standardOutput.split(separator: "\n").first { $0.hasPrefix("done in") }.map(String.init) ?? "" }
        /// How long its whole push took, from its "done" line.
        var duration: Duration? {
            guard let seconds = result.split(separator: " ").dropFirst(2).first.flatMap({ Double($0) }) else { return nil }
            return .milliseconds(Int(seconds * 1000))
        }
    }

    /// A FIFO in the bus's folder (bound read-only into each sandbox): the pushers' start line.
    static func startLine(_ bus: PrivateBus) throws -> String {
        let path = bus.directory.appendingPathComponent("start-line").path
        guard mkfifo(path, 0o644) == 0 else { throw TestSupportError("mkfifo \(path): \(String(cString: strerror(errno)))") }
        return path
    }

    /// Holds the FIFO open for writing (every pusher's open for reading returns then, at once) while
    /// `body` runs. Opened read-write, which on Linux never waits for a reader: a pusher that died
    /// cannot hang the test.
    static func holdingOpen(_ fifo: String, _ body: () async throws -> Void) async throws {
        let fd = open(fifo, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw TestSupportError("open \(fifo): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try await body()
    }

    @Test("three sandboxed apps (bubblewrap, each behind xdg-dbus-proxy) push 64 MiB of labels each at once, in batches of 16 MiB, and complete: every batch and Complete is answered ok and each directory holds its 262,144 entries; the daemon's peak RSS grows by less than the three updates' labels together (192 MiB); a host app's whole calls meanwhile take no longer than on a daemon nobody pushes to (median), none longer than the pushing itself (issue 53, probe finding #5: a whole call took 8.0 s, memory peaked at 358 MiB)",
          .enabled(if: Sandbox.isProxyAvailable, "bubblewrap or xdg-dbus-proxy is missing"))
    func threeAppsPushAtOnce() async throws {
        let apps = 3, batches = 4, perBatch = 65_536, labelBytes = 256
        // Calls as fast as the test makes them, on both: the flood guard is not what is tested here.
        let daemon = try await RunningDaemon(["--incoming-call-rate", "0"])
        let clean = try await RunningDaemon(["--incoming-call-rate", "0"])
        let fifo = try Self.startLine(daemon.bus)
        var pushers: [Pusher] = []
        defer { pushers.forEach { $0.kill() } }
        for index in 0..<apps {
            pushers.append(try await Pusher(appID: "org.example.Pusher\(index)", bus: daemon.bus, startLine: fifo,
                                            batches: batches, perBatch: perBatch, labelBytes: labelBytes))
        }
        for pusher in pushers {
            try #require(await pusher.app.waitForOutput(containing: "ready", timeout: .seconds(120)), "\(pusher.app.output)")
        }
        let host = try await TestProvider(bus: daemon.bus, name: "Other", configuration: [:])
        let user = try Connection(address: daemon.bus.address)
        let quiet = try await TestProvider(bus: clean.bus, name: "Other", configuration: [:])
        let quietUser = try Connection(address: clean.bus.address)
        // A whole call on each first: both daemons as warm as they will be.
        _ = try await StarvationTests.wholeCall(host, user: user)
        _ = try await StarvationTests.wholeCall(quiet, user: quietUser)
        let before = HostileAppTests.memory(daemon.daemon.pid)

        try await Self.holdingOpen(fifo) {
            for pusher in pushers {
                #expect(await pusher.app.waitForOutput(containing: "pushing", timeout: .seconds(60)), "\(pusher.app.output)")
            }
        }
        // The host app's whole calls while they push and complete, each beside one on the clean
        // daemon (the same machine at the same moment: the whole suite runs on 2 cores).
        var pushed: [Duration] = [], unpushed: [Duration] = []
        while pushed.count < 7 || (!pushers.allSatisfy(\.isDone) && pushers.allSatisfy(\.app.isRunning)) {
            pushed.append(try await StarvationTests.wholeCall(host, user: user))
            unpushed.append(try await StarvationTests.wholeCall(quiet, user: quietUser))
        }
        for pusher in pushers {
            #expect(await pusher.app.waitForOutput(containing: "done in", timeout: .seconds(300)), "\(pusher.app.output)")
            #expect(pusher.result.hasSuffix(#"{"batch": {"ok": \#(batches)}, "complete": {"ok": 1}}"#), "\(pusher.app.output)")
        }
        let peak = HostileAppTests.memory(daemon.daemon.pid).peak

        // Each app's directory, whole (off until the user enables it).
        let listed = try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallDirectory.interface,
                                         member: "ListDirectories")
        let whole = (0..<apps).map { DBusValue.structure([.string("org.example.Pusher\($0)"), .bool(false), .uint64(0), .uint64(UInt64(batches * perBatch))]) }
        #expect(listed == [.array(element: "(sbtt)", whole)], "\(listed)")

        // The three updates' labels are never all in the daemon's memory at once, nor a second copy of any.
        let growth = peak - before.peak
        #expect(growth < apps * 64 * 1024, "the daemon's peak RSS grew by \(growth / 1024) MiB (\(before.peak / 1024) → \(peak / 1024) MiB)")
        let median = (pushed.sorted()[pushed.count / 2], unpushed.sorted()[unpushed.count / 2])
        StarvationTests.expectUnharmed(median)
        // The slowest is a call whose messages arrived behind batches in flight: each batch is read
        // and decoded by the D-Bus library on the service queue before any handler runs (1.2-2.3 s
        // here alone on 2 cores). Even behind every batch, a call waits no longer than the pushing
        // itself, so the bound is the longest push, measured in the same run: a loaded machine
        // moves both (a fixed 20 s bound failed once at 22 s with the whole suite on 2 cores). It
        // holds for stalls of another kind only; the median above is the starvation check.
        let slowest = pushed.max()!
        let longestPush = pushers.compactMap(\.duration).max() ?? .zero
        #expect(slowest < longestPush + .seconds(1),
                "the slowest whole call while they pushed took \(slowest), the longest push \(longestPush) (\(unpushed.max()!) on a daemon nobody pushes to)")
        print("three apps pushing 64 MiB of labels each at once: \(pushers.map(\.result)); the daemon's peak RSS \(before.peak / 1024) → \(peak / 1024) MiB; "
            + "a host app's \(pushed.count) whole calls meanwhile: median \(median.0), slowest \(slowest) (on a daemon nobody pushes to: \(median.1), \(unpushed.max()!))")
    }
}
