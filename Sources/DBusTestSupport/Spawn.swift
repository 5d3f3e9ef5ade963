import Foundation
import ProcessSpawn
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
    /// (Our own spawns all happen on the spawner thread, one at a time.)
    private static func spawn(_ argv: [String], environment: [String: String]) throws -> (pid_t, Int32, Int32) {
        let pipes: [Spawn.Pipe]
        switch Spawn.pipes(2) {
        case .success(let made): pipes = made
        case .failure(let error): throw TestSupportError("pipe failed: \(error)")
        }
        let (out, err) = (pipes[0], pipes[1])
        // The test runner's threads may block or ignore signals; the child starts clean.
        let started = Spawn.start(argv, environment: environment, files: [
            .open(path: "/dev/null", flags: O_RDONLY, as: 0), .duplicate(out.write, as: 1), .duplicate(err.write, as: 2),
        ])
        close(out.write)
        close(err.write)
        switch started {
        case .success(let pid):
            return (pid, out.read, err.read)
        case .failure(let error):
            close(out.read)
            close(err.read)
            throw TestSupportError("cannot start \(argv.joined(separator: " ")): \(error)")
        }
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
