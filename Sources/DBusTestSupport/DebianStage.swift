import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Another Debian in a folder (`scripts/debian-root`), and programs run inside it as if it were
/// the machine: Debian 13's KRunner (Plasma 6) and GNOME Shell 48 on a Debian 12 host, connected
/// to a test's session bus.
///
/// Each command runs in a PID and mount namespace of its own:
/// `unshare --fork --pid --kill-child --mount --mount-proc=ROOT/proc`, then, inside that
/// namespace only, bind mounts of the machine's `/dev`, `/dev/shm`, `/dev/pts`, `/sys`, `/tmp` and
/// `/tmp/.X11-unix` onto the root's (the test buses' sockets and temporary folders, X's socket,
/// have the same paths inside and out), then `chroot ROOT env -i …`: nothing of the test
/// process's environment but what the caller gives.
///
/// The root is only read (many tests share it at once); the mounts go with the namespace.
/// Killing the namespace's first process ends everything in it, with the programs that would
/// outlive a session bus (kactivitymanagerd, baloorunner): the returned `ChildProcess` is
/// `unshare` itself, and its `kill()` (SIGKILL; it ignores SIGTERM) does that, as does its release
/// or the test process's end (`--kill-child`, and `Spawned`'s PDEATHSIG).
public struct DebianStage: Sendable {
    /// The folder that holds the root.
    public let root: String
    /// What it is, for messages: "Debian 13's desktop stage".
    public let name: String
    /// The command that makes the root, for messages.
    public let maker: String

    /// Debian 13 with GNOME Shell 48 and Plasma 6's krunner (`scripts/debian-root trixie desktop`):
    /// `MONKEYCALL_TRIXIE_STAGE`, else /var/tmp/monkeycall-stage-trixie-desktop.
    public static let trixieDesktop = DebianStage(
        root: ProcessInfo.processInfo.environment["MONKEYCALL_TRIXIE_STAGE"] ?? "/var/tmp/monkeycall-stage-trixie-desktop",
        name: "Debian 13's desktop stage", maker: "scripts/debian-root trixie desktop")

    static let unshare = "/usr/bin/unshare"
    static let chroot = "/usr/sbin/chroot"
    /// The file `scripts/debian-root` writes once the root is wholly unpacked.
    static let stamp = ".monkeycall-stage"

    /// Why commands cannot run in the root here (not root, the root absent or half unpacked, one of
    /// `files` missing in it: paths inside the root); nil when they can.
    public func unavailableReason(needing files: [String] = []) -> String? {
        guard geteuid() == 0 else { return "\(name) needs root (unshare, mount, chroot)" }
        for tool in [Self.unshare, Self.chroot] where access(tool, X_OK) != 0 {
            return "\(tool) is missing (util-linux, coreutils)"
        }
        guard FileManager.default.fileExists(atPath: root + "/" + Self.stamp) else {
            return "\(name) is not at \(root) (\(maker) makes it; MONKEYCALL_TRIXIE_STAGE names another folder)"
        }
        for file in ["/usr/bin/env"] + files where !FileManager.default.fileExists(atPath: root + file) {
            return "\(name) at \(root) has no \(file)"
        }
        return nil
    }

    public var isAvailable: Bool { unavailableReason() == nil }

    /// The machine's folders bound onto the root's, in this order (missing ones are skipped).
    static let boundFolders = ["/dev", "/dev/shm", "/dev/pts", "/sys", "/tmp", "/tmp/.X11-unix"]

    /// Starts `executable` (a path inside the root) with `arguments` in a namespace of its own,
    /// with exactly `environment` (PATH is the root's `/usr/bin:/bin` unless given). `binding`:
    /// more of the machine's folders to bind at the same path inside (the temporary folder, when
    /// TMPDIR is not under /tmp, is added by itself); a missing mount point is made in the root.
    /// End it with `kill()`.
    public func spawn(_ executable: String, _ arguments: [String] = [], environment: [String: String],
                      binding extra: [String] = []) throws -> ChildProcess {
        if let reason = unavailableReason(needing: [executable]) { throw TestSupportError(reason) }
        var folders = Self.boundFolders
        let temporary = FileManager.default.temporaryDirectory.standardizedFileURL.path
        if temporary != "/tmp", !temporary.hasPrefix("/tmp/") { folders.append(temporary) }
        folders += extra
        // Runs in the namespace, on the machine's side: the mounts, then the chroot. It is
        // unshare's child, the namespace's first process, until it execs the command: the command
        // is then that first process.
        let script = """
            set -e
            root="$1"; shift
            for folder in \(folders.map(Self.quoted).joined(separator: " ")); do
                [ -d "$folder" ] || continue
                [ -d "$root$folder" ] || mkdir -p "$root$folder"
                mount --bind "$folder" "$root$folder"
            done
            exec \(Self.chroot) "$root" /usr/bin/env -i "$@"
            """
        var variables = environment
        if variables["PATH"] == nil { variables["PATH"] = "/usr/bin:/bin" }
        let assignments = variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try ChildProcess(Self.unshare, ["--fork", "--pid", "--kill-child", "--mount", "--mount-proc=\(root)/proc", "--",
                                               "/bin/sh", "-c", script, "debian-stage", root] + assignments + [executable] + arguments,
                                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
