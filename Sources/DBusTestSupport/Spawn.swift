import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped by its own waiting
/// thread. Foundation's Process relies on a run loop to notice exits, which
/// does not turn inside Swift Testing's threads.
final class Spawned: @unchecked Sendable {
    let pid: pid_t
    private static let spawnLock = NSLock()
    private let lock = NSLock()
    private var status: Int32?
    private let exitedSemaphore = DispatchSemaphore(value: 0)

    /// Starts `executable`; `onOutput(isStderr, data)` receives its output until EOF.
    init(_ executable: String, _ arguments: [String], environment: [String: String],
         onOutput: @escaping @Sendable (Bool, Data) -> Void, onExit: @escaping @Sendable (Int32) -> Void) throws {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        // Close-on-exec, so that children spawned at the same time by other
        // threads do not inherit our pipes and hold back their end of file.
        // (Glibc's module does not export pipe2; a lock around pipe and spawn does the same for our own spawns.)
        Spawned.spawnLock.lock()
        defer { Spawned.spawnLock.unlock() }
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
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        let readers = DispatchGroup()
        for (fd, isStderr) in [(outPipe[0], false), (errPipe[0], true)] {
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
