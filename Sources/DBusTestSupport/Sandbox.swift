import Foundation

/// Runs a program inside bubblewrap the way Flatpak runs an app: a fresh tmpfs root with the host's
/// `/usr` (and what the program needs) read-only, its own `/tmp`, a `/.flatpak-info` naming the app,
/// and only the test bus's socket to talk through. The host's `/` is never bound: bwrap would create
/// `/.flatpak-info` on the host.
public enum Sandbox {
    public static let bwrap = "/usr/bin/bwrap"

    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: bwrap) }

    /// Starts `executable` as the Flatpak app `appID` on `bus`. `readOnly` folders or files (a
    /// script, the build products, the Swift runtime) are bound at the same paths, read-only.
    public static func flatpak(appID: String, bus: PrivateBus, executable: String, _ arguments: [String],
                               readOnly: [String] = []) throws -> ChildProcess {
        guard isAvailable else { throw TestSupportError("bubblewrap is not installed (scripts/deps installs it)") }
        guard let socket = socketPath(of: bus.address) else { throw TestSupportError("the test bus has no socket path: \(bus.address)") }
        let info = bus.directory.appendingPathComponent("flatpak-info-\(appID)")
        try "[Application]\nname=\(appID)\nruntime=runtime/org.freedesktop.Platform/x86_64/24.08\n"
            .write(to: info, atomically: true, encoding: .utf8)
        var bwrapArguments = [
            "--die-with-parent", "--unshare-pid", "--clearenv",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--ro-bind", "/etc", "/etc",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--ro-bind", info.path, "/.flatpak-info",
            "--bind", socket, socket,
            "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=\(socket)",
            "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
        ]
        for path in readOnly { bwrapArguments += ["--ro-bind", path, path] }
        return try ChildProcess(bwrap, bwrapArguments + ["--", executable] + arguments)
    }

    /// `/path` of a `unix:path=/path,guid=…` address.
    static func socketPath(of address: String) -> String? {
        for part in address.split(separator: ",") {
            if let range = part.range(of: "unix:path=") { return String(part[range.upperBound...]) }
            if part.hasPrefix("path=") { return String(part.dropFirst(5)) }
        }
        return nil
    }
}
