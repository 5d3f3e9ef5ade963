import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped by its own waiting
/// thread. Foundation's Process relies on a run loop to notice exits, which
/// does not turn inside Swift Testing's threads.
///
/// The child dies with the process that started it (a test run, the
/// benchmark), however that ends, even by SIGKILL: it runs with
/// `PR_SET_PDEATHSIG` = SIGKILL, so nothing is left for a script to kill by
/// name. posix_spawn has no hook to set it in the child, so the child is
/// started through `setpriv --pdeathsig KILL` (util-linux), which sets it and
/// execs the program in the same process: the pid is the program's.
/// (Between the spawn and setpriv's `prctl` there is a window of a few hundred
/// microseconds in which a dying parent would leave the child behind.)
/// Grandchildren do not inherit it: a program that forks must itself stop
/// what it started (`PrivateBus` runs `dbus-daemon --nofork`; the daemons the
/// bus activates exit when their bus goes).
final class Spawned: @unchecked Sendable {
    let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?
    private let exitedSemaphore = DispatchSemaphore(value: 0)

    static let setpriv = "/usr/bin/setpriv"

    /// Starts `executable`; `onOutput(isStderr, data)` receives its output until EOF.
    init(_ executable: String, _ arguments: [String], environment: [String: String],
         onOutput: @escaping @Sendable (Bool, Data) -> Void, onExit: @escaping @Sendable (Int32) -> Void) throws {
        // setpriv would report these only as exit status 127.
        guard access(Self.setpriv, X_OK) == 0 else {
            throw TestSupportError("cannot start \(executable): \(Self.setpriv) is missing (it comes with util-linux)")
        }
        guard access(executable, X_OK) == 0 else {
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(errno)))")
        }
        let (pid, outRead, errRead) = try Spawner.shared.run {
            try Self.spawn([Self.setpriv, "--pdeathsig", "KILL", "--", executable] + arguments, environment: environment)
        }
        self.pid = pid
        let readers = DispatchGroup()
        for (fd, isStderr) in [(outRead, false), (errRead, true)] {
            readers.enter()
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(fd, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    onOutput(isStderr, Data(buffer[0..<count]))
                }
                close(fd)
                readers.leave()
            }
        }
        let child = pid
        Thread.detachNewThread { [self] in
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) < 0 && errno == EINTR {}
            // Exit code, or 128 + signal like a shell.
            let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            // The output normally ends with the process; a grandchild may keep it open.
            _ = readers.wait(timeout: .now() + 2)
            lock.withLock { status = code }
            onExit(code)
            exitedSemaphore.signal()
        }
    }

    /// Runs on the spawner thread: the child with its stdin from /dev/null and
    /// its stdout and stderr into pipes; returns its pid and the pipes' read ends.
    private static func spawn(_ argv: [String], environment: [String: String]) throws -> (pid_t, Int32, Int32) {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        // Close-on-exec, so that children spawned at the same time by other
        // threads do not inherit our pipes and hold back their end of file.
        // (Glibc's module does not export pipe2; our own spawns all happen on
        // the spawner thread, one at a time, which does the same for them.)
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw TestSupportError("pipe failed: errno \(errno)") }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        // The test runner's threads may block or ignore signals; the child starts clean.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t(), defaults = sigset_t()
        sigemptyset(&emptyMask)
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgv = argv.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw TestSupportError("cannot start \(argv.joined(separator: " ")): \(String(cString: strerror(result)))")
        }
        return (pid, outPipe[0], errPipe[0])
    }

    var exitStatus: Int32? { lock.withLock { status } }

    /// Blocks until the child exits; nil after `seconds`.
    func wait(seconds: Double) -> Int32? {
        guard exitedSemaphore.wait(timeout: .now() + seconds) == .success else { return nil }
        exitedSemaphore.signal()
        return exitStatus
    }

    func signal(_ number: Int32) {
        if exitStatus == nil { kill(pid, number) }
    }
}

/// The one thread that starts every child, for as long as the process lives.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that started the child exits,
/// not only the process: Swift concurrency's and Dispatch's worker threads
/// come and go, and `PrivateBus.start` spawns from a thread that ends at once.
/// A child started here is killed only when the process ends.
final class Spawner: @unchecked Sendable {
    static let shared = Spawner()

    private let condition = NSCondition()
    private var jobs: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "DBusTestSupport.Spawner"
        thread.start()
    }

    private func serve() -> Never {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Runs `work` on the spawner thread and waits for it.
    func run<T>(_ work: @escaping () throws -> T) throws -> T {
        var result: Result<T, any Error>?
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        jobs.append {
            result = Result { try work() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try result!.get()
    }
}
