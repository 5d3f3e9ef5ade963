import DBus
import DBusTestSupport
import DesktopNotifications
import Foundation
import MonkeyCallAPI
import TelephonyCore
@testable import TelephonyService
import Testing

/// With no call in progress nothing is armed to wake the daemon: no timer of
/// the telephony clock, no libdbus timeout, and in the running daemon no thread
/// waiting with a timeout and no timerfd armed (not even libdispatch's
/// worker-pool monitor; the benchmark counts the wake-ups).
@Suite("Idle: no timer armed without a call")
struct IdleTests {
    @Test("the real clock and libdbus have no timer armed before the first call and once calls have ended by the user or the remote side")
    func realClockHasNoTimerWhenIdle() async throws {
        let service = try await RealClockService(ringTimeout: 45)
        #expect(await service.armed() == [0, 0])
        let app = try await TestProvider(bus: service.bus, name: "Monkey", configuration: [:])
        #expect(await service.armed() == [0, 0])

        // Answered, then ended by the user.
        let answered = try await app.reportIncoming("alice")
        #expect(await service.armed()[0] == 1) // its ring timeout
        try await service.control("AnswerCall", answered)
        try await app.perform("answer")
        try await service.control("EndCall", answered)
        try await app.perform("end")
        let afterUserEnd = try await service.settled() // [clock tasks, libdbus timeouts]
        #expect(afterUserEnd == [0, 0])

        // Ended by the remote side while it rang.
        let hungUp = try await app.reportIncoming("bob")
        try await app.call("ReportCallEnded", [.string(hungUp), .string("remote-ended"), .uint64(0)])
        let afterRemoteEnd = try await service.settled()
        #expect(afterRemoteEnd == [0, 0])
        await service.stop()
    }

    @Test("a ring timeout that fired leaves no timer armed once its end action is fulfilled")
    func firedTimerIsNotLeftArmed() async throws {
        let service = try await RealClockService(ringTimeout: 0.2)
        let app = try await TestProvider(bus: service.bus, name: "Monkey", configuration: [:])
        _ = try await app.reportIncoming("carol")
        try await app.perform("end")
        #expect(try await service.settled() == [0, 0])
        await service.stop()
    }

    @Test("the running daemon, idle after a call: every thread waits without a timeout, and no timer is armed, libdispatch's monitor included",
          .enabled(if: ThreadWait.isKnownArchitecture && !Deadlines.underThreadSanitizer))
    func idleDaemonWaitsWithoutTimeouts() async throws {
        let daemon = try await RunningDaemon()
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let controller = try Connection(address: daemon.bus.address)
        defer { controller.close() }
        let uuid = try await app.reportIncoming("alice")
        for (member, action) in [("AnswerCall", "answer"), ("EndCall", "end")] {
            try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                      interface: Telephony1.CallController.interface, member: member, [.string(uuid)])
            try await app.perform(action)
        }
        // A Ping through the service's queue: the end has been handled when it returns.
        try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                  interface: "org.freedesktop.DBus.Peer", member: "Ping")

        // Threads that are running at the moment of a look say nothing, and a reply still on its way
        // (libnotify asking a bus that is slow under load) is a wait with a timeout that ends: look
        // until no thread runs and none waits with a timeout (10 s at most).
        let pid = daemon.daemon.pid
        var waits: [ThreadWait] = []
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            waits = ThreadWait.all(of: pid)
            if waits.allSatisfy({ $0.state != .running && ($0.state != .timed || $0.isLibdispatchIdleWorker) }) { break }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        #expect(!waits.isEmpty)
        let timed = waits.filter { $0.state == .timed && !$0.isLibdispatchIdleWorker }
        #expect(timed.isEmpty, "threads waiting with a timeout: \(timed)")
        #expect(waits.allSatisfy { $0.state != .running }, "threads still running: \(waits.filter { $0.state == .running })")

        // No timer at all once replies the call's end awaits have come (media players asked to
        // resume, ...): libdispatch's worker-pool monitor, which re-arms a timerfd every second
        // for good once a worker of a global queue has run, must never have started (the daemon's
        // tasks run on `SerialTaskExecutor`). Watched for longer than its period, so it would show.
        let started = ContinuousClock.now
        var armed = try TimerFD.all(of: pid).filter(\.willWake)
        while !armed.isEmpty, ContinuousClock.now < started + Deadlines.stretched(.seconds(10)) {
            try await Task.sleep(for: .milliseconds(50))
            armed = try TimerFD.all(of: pid).filter(\.willWake)
        }
        #expect(armed.isEmpty, "armed timerfds: \(armed)")
        let quiet = ContinuousClock.now
        while armed.isEmpty, ContinuousClock.now < quiet + .milliseconds(1_500) {
            try await Task.sleep(for: .milliseconds(50))
            armed = try TimerFD.all(of: pid).filter(\.willWake)
        }
        #expect(armed.isEmpty, "armed after \(ContinuousClock.now - quiet) without a call: \(armed)")
    }

    @Test("GNOME's Do Not Disturb is followed in a GNOME session or where the session is not named, not on other desktops")
    func gnomeSessions() {
        #expect(GnomeNotificationBanners.appliesToSession([:]))
        #expect(GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": ""]))
        #expect(GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": "GNOME"]))
        #expect(GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]))
        #expect(GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": "GNOME-Flashback:GNOME"]))
        #expect(!GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": "KDE"]))
        #expect(!GnomeNotificationBanners.appliesToSession(["XDG_CURRENT_DESKTOP": "XFCE"]))
    }
}

/// What a thread of another process is blocked in, from /proc/PID/task/TID/syscall.
struct ThreadWait: CustomStringConvertible {
    enum State { case untimed, timed, running }
    let name: String
    let syscall: String
    let state: State

    /// An idle libdispatch worker waits 5 s for work on a semaphore, then exits: that timeout ends with it.
    var isLibdispatchIdleWorker: Bool { name.contains("qos") && syscall.hasPrefix("\(Self.futex) ") }
    var description: String { "\(name) [\(syscall.split(separator: " ").prefix(7).joined(separator: " "))]" }

    #if arch(x86_64)
    static let isKnownArchitecture = true
    static let futex = 202
    /// Blocking calls and which argument holds their timeout: an int of milliseconds (-1: none) or a pointer (0: none).
    static let timeouts: [Int: (argument: Int, isPointer: Bool)] = [
        7: (2, false), 271: (2, true), 232: (3, false), 281: (3, false), 441: (3, true), 202: (3, true), 23: (4, true), 270: (4, true),
        35: (0, true), 230: (2, true),
    ]
    #elseif arch(arm64)
    static let isKnownArchitecture = true
    static let futex = 98
    static let timeouts: [Int: (argument: Int, isPointer: Bool)] = [
        73: (2, true), 22: (3, false), 441: (3, true), 98: (3, true), 72: (4, true), 101: (0, true), 115: (2, true),
    ]
    #else
    static let isKnownArchitecture = false
    static let futex = -1
    static let timeouts: [Int: (argument: Int, isPointer: Bool)] = [:]
    #endif

    static func all(of pid: Int32) -> [ThreadWait] {
        let folder = "/proc/\(pid)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return tasks.compactMap { tid in
            guard let name = try? String(contentsOfFile: "\(folder)/\(tid)/comm", encoding: .utf8),
                  let syscall = try? String(contentsOfFile: "\(folder)/\(tid)/syscall", encoding: .utf8) else { return nil }
            let line = syscall.trimmingCharacters(in: .whitespacesAndNewlines)
            return ThreadWait(name: name.trimmingCharacters(in: .whitespacesAndNewlines), syscall: line, state: state(line))
        }
    }

    static func state(_ line: String) -> State {
        let fields = line.split(separator: " ")
        guard let number = fields.first.flatMap({ Int($0) }), number >= 0 else { return .running }
        guard let timeout = timeouts[number] else { return .untimed }
        guard fields.count > timeout.argument + 1, let value = UInt64(fields[timeout.argument + 1].dropFirst(2), radix: 16) else { return .running }
        // An int of -1 shows as its low 32 bits set.
        return timeout.isPointer ? (value == 0 ? .untimed : .timed) : (value & 0xffff_ffff == 0xffff_ffff ? .untimed : .timed)
    }
}

/// A timerfd of another process, from /proc/PID/fdinfo, and whether an epoll set of the process
/// watches it. Only a watched one wakes anything: libdispatch takes a timerfd out of its epoll set
/// when its last timer goes, but leaves it armed to expire unseen.
struct TimerFD: CustomStringConvertible {
    let fd: Int
    let remaining: Double
    let interval: Double
    let watched: Bool
    var isArmed: Bool { remaining > 0 }
    /// Armed and watched: it will wake a thread.
    var willWake: Bool { isArmed && watched }
    var repeats: Bool { interval > 0 }
    var description: String { "timerfd \(fd)(remaining \(remaining) s, interval \(interval) s\(watched ? "" : ", not watched"))" }

    static func all(of pid: Int32) throws -> [TimerFD] {
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { Int($0) }
        let kinds = fds.map { (fd: $0, kind: try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) }
        // An epoll fd's fdinfo has a line "tfd: N events: MASK data: ..." for each fd in its set; a
        // one-shot entry that has fired stays there without EPOLLIN (1) until it is armed again.
        let watched = Set(kinds.filter { $0.kind == "anon_inode:[eventpoll]" }.flatMap { epoll -> [Int] in
            let info = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(epoll.fd)", encoding: .utf8)) ?? ""
            return info.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count >= 4, fields[0] == "tfd:", fields[2] == "events:", let fd = Int(fields[1]),
                      let events = UInt32(fields[3], radix: 16), events & 1 != 0 else { return nil }
                return fd
            }
        })
        return kinds.compactMap { fd, kind in
            guard kind == "anon_inode:[timerfd]", let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { return nil }
            return TimerFD(fd: fd, remaining: seconds("it_value", info), interval: seconds("it_interval", info), watched: watched.contains(fd))
        }
    }

    /// "it_value: (0, 811012902)" as seconds.
    private static func seconds(_ field: String, _ info: String) -> Double {
        guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
        let numbers = line.split(whereSeparator: { !"0123456789".contains($0) }).compactMap { Double($0) }
        return numbers.count == 2 ? numbers[0] + numbers[1] / 1e9 : 0
    }
}

/// The service in this process on the real clock (a `DispatchClock`), on a bus of its own.
private final class RealClockService: @unchecked Sendable {
    let bus: PrivateBus
    let connection: Connection
    let service: TelephonyService
    let controller: Connection

    init(ringTimeout: Double) async throws {
        bus = try await PrivateBus.start()
        connection = try Connection(address: bus.address, queue: TelephonyActor.queue)
        var options = ServiceOptions()
        options.ringTimeout = ringTimeout
        options.dataDirectory = bus.directory.appendingPathComponent("data").path
        service = await TelephonyService(connection: connection, options: options, clock: DispatchClock(queue: TelephonyActor.queue),
                                   databasePath: bus.directory.appendingPathComponent("monkeycall.sqlite").path)
        try await service.start()
        controller = try Connection(address: bus.address)
    }

    /// The clock's armed timers and the service connection's libdbus timeouts.
    func armed() async -> [Int] {
        await Self.armed(service)
    }

    @TelephonyActor
    private static func armed(_ service: TelephonyService) -> [Int] {
        [(service.switchboard.clock as! DispatchClock).pendingTaskCount, service.connection.armedTimeouts]
    }

    /// Once the calls have ended the service may still await a reply for a moment (media players
    /// are asked to resume, with a reply timeout): what counts is that nothing stays armed.
    func settled() async throws -> [Int] {
        // Generous: on a loaded machine (the whole suite at once on two cores) a reply can take seconds.
        // The first look that finds nothing armed is the answer: a later one may catch a reply
        // awaited for a moment by work the call's end started (media players asked to resume).
        let deadline = ContinuousClock.now + .seconds(20)
        var armed = await armed()
        while armed != [0, 0], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            armed = await self.armed()
        }
        return armed
    }

    func control(_ member: String, _ uuid: String) async throws {
        try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                  interface: Telephony1.CallController.interface, member: member, [.string(uuid)])
    }

    func stop() async {
        controller.close()
        await service.stop()
        bus.stop()
    }
}
