import FoundationEssentials
import Glibc
import Logging
import ProcessSpawn
import QueueExecutor

/// Starts a program outside the daemon: as a transient service of the systemd user manager
/// (`systemd-run --user`), which spawns it, so that it inherits none of the daemon's confinement
/// (its unit has no network and a read-only home, and mount namespaces and seccomp filters pass
/// to every child, whatever its cgroup) and is not stopped with the daemon. `ExitType=cgroup`
/// keeps the unit while the program lives when its starter (`gio launch`) exits at once. Without
/// a systemd user manager (no `systemd-run`, or it fails), the daemon runs unconfined anyway:
/// the program is its child.
enum ProgramLauncher {
    static func start(_ command: [String], as appID: String, logger: Logger) {
        let unit = "app-monkeycall-" + String(appID.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == ".") ? Character($0) : "_" }).prefix(100)
            + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let systemdRun = ["systemd-run", "--user", "--quiet", "--collect", "--unit=\(unit)", "--property=ExitType=cgroup", "--"]
        if run(systemdRun + command, waiting: true, logger: logger) == 0 {
            logger.info("started \(command.joined(separator: " ")) as \(unit).service")
            return
        }
        _ = run(command, waiting: command.first == "gio", logger: logger)
    }

    /// Runs `command` found on `PATH`; waits for it only when `waiting` (its exit status), else
    /// leaves it running (nil). nil also when it cannot be run.
    @discardableResult
    private static func run(_ command: [String], waiting: Bool, logger: Logger) -> Int32? {
        guard let name = command.first, let executable = Spawn.executablePath(name, environment: ProcessInfo.processInfo.environment) else {
            logger.info("\(command.first ?? "") is not installed")
            return nil
        }
        let started = Spawn.start([executable] + command.dropFirst(), environment: ProcessInfo.processInfo.environment,
                                  files: [.open(path: "/dev/null", flags: O_RDONLY, as: 0)])
        guard case .success(let pid) = started else {
            if case .failure(let error) = started { logger.warning("cannot run \(command.joined(separator: " ")): \(error)") }
            return nil
        }
        guard waiting else {
            // Reaped when it exits, so that it never stays a zombie of the daemon.
            DetachedThread.start { Spawn.waitForExit(pid) }
            return nil
        }
        let status = Spawn.waitForExit(pid)
        if status != 0 { logger.warning("\(command.joined(separator: " ")) failed with status \(status)") }
        return status
    }
}
