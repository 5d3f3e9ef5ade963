#if canImport(Glibc)
import CSpawn
import Glibc
#endif

/// Starting a program with `posix_spawn`, clean: every signal at its default and none blocked
/// (the spawning process's threads block or ignore some, and a child inherits both), with its
/// descriptors as the caller arranges them and no other: every descriptor from 3 up is closed in
/// the child, so a socket or pipe another thread opened a moment before (and had not yet marked
/// close-on-exec) is never held by a child for its whole life. For the daemon's helpers and the
/// tests' children.
public enum Spawn {
    /// What a descriptor of the child is.
    public enum File {
        /// `path` opened with `flags` as `descriptor`.
        case open(path: String, flags: Int32, as: Int32)
        /// The parent's `descriptor` as the child's `as`.
        case duplicate(Int32, as: Int32)
        /// The parent's `descriptor`, closed in the child.
        case close(Int32)
    }

    /// Starts `argv[0]` with `argv` and `environment`; the pid, or the errno of the failure.
    public static func start(_ argv: [String], environment: [String: String], files: [File]) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for file in files {
            switch file {
            case .open(let path, let flags, let descriptor): posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0)
            case .duplicate(let descriptor, let target): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .close(let descriptor): posix_spawn_file_actions_addclose(&actions, descriptor)
            }
        }
        monkeycall_spawn_close_from(&actions, 3)
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
        return result == 0 ? .success(pid) : .failure(SpawnError(code: result))
    }

    /// The program `name` to start: as given when it has a slash, else the first executable of that
    /// name on `PATH`; nil when there is none.
    public static func executablePath(_ name: String, environment: [String: String]) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Waits for the child `pid` to end and reaps it: its exit status, or 128 + the signal that
    /// ended it (as a shell says it); -1 when it is not a child of this process.
    @discardableResult
    public static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
    }

    /// Waits for the child `pid` to end without reaping it: it stays a zombie, its pid taken, until
    /// `waitForExit` reaps it. So a `kill` sent in between by whoever owns the child reaches the
    /// child, never another process that got the pid. False when it is not a child of this process.
    @discardableResult
    public static func waitUntilEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// One pipe: what is written to `write` is read from `read`.
    public struct Pipe: Sendable {
        public let read: Int32
        public let write: Int32
    }

    /// `count` pipes whose ends are all close-on-exec, so that a child another thread starts
    /// meanwhile does not inherit them and hold back their end of file (`duplicate` onto a
    /// child's descriptor clears the flag there); none when one cannot be made.
    public static func pipes(_ count: Int) -> Result<[Pipe], SpawnError> {
        var made: [Pipe] = []
        for _ in 0..<count {
            var ends: [Int32] = [0, 0]
            guard monkeycall_pipe(&ends, O_CLOEXEC) == 0 else {
                let error = SpawnError(code: errno)
                for pipe in made { close(pipe.read); close(pipe.write) }
                return .failure(error)
            }
            made.append(Pipe(read: ends[0], write: ends[1]))
        }
        return .success(made)
    }
}

/// An errno from starting a program, with its text.
public struct SpawnError: Error, CustomStringConvertible {
    public let code: Int32
    public var description: String { String(cString: strerror(code)) }
}
