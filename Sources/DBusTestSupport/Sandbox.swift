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
    /// `socket`: the bus socket the app sees (default: the test bus's own; see `proxy`).
    public static func flatpak(appID: String, bus: PrivateBus, executable: String, _ arguments: [String],
                               readOnly: [String] = [], socket: String? = nil) throws -> ChildProcess {
        guard isAvailable else { throw TestSupportError("bubblewrap is not installed (scripts/deps installs it)") }
        guard let socket = socket ?? socketPath(of: bus.address) else { throw TestSupportError("the test bus has no socket path: \(bus.address)") }
        let info = try flatpakInfo(appID: appID, bus: bus)
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

    /// The app's `/.flatpak-info`, written in the bus's folder.
    static func flatpakInfo(appID: String, bus: PrivateBus) throws -> URL {
        let info = bus.directory.appendingPathComponent("flatpak-info-\(appID)")
        try "[Application]\nname=\(appID)\nruntime=runtime/org.freedesktop.Platform/x86_64/24.08\n"
            .write(to: info, atomically: true, encoding: .utf8)
        return info
    }

    public static let proxyExecutable = "/usr/bin/xdg-dbus-proxy"
    public static var isProxyAvailable: Bool { isAvailable && FileManager.default.isExecutableFile(atPath: proxyExecutable) }

    /// Flatpak's own bus proxy for `appID`, run as `flatpak run` runs it: `xdg-dbus-proxy --filter`
    /// in a bwrap of its own with the app's `/.flatpak-info` (the bus reports the proxy's PID for the
    /// app's connection, which is how the service knows the app), allowed to own `APPID.*` and to
    /// talk to `talk`. Returns the proxy and the socket to give the app (`flatpak(…, socket:)`),
    /// once the proxy says it is ready (it writes a byte to `--fd`, here its stdout).
    public static func proxy(appID: String, bus: PrivateBus, talk: [String]) async throws -> (process: ChildProcess, socket: String) {
        guard isProxyAvailable else { throw TestSupportError("xdg-dbus-proxy is not installed (scripts/deps installs it)") }
        guard let busSocket = socketPath(of: bus.address) else { throw TestSupportError("the test bus has no socket path: \(bus.address)") }
        let info = try flatpakInfo(appID: appID, bus: bus)
        let folder = bus.directory.appendingPathComponent("proxy-\(appID)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("bus").path
        let arguments = [
            "--die-with-parent", "--unshare-pid",
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
            "--proc", "/proc", "--dev", "/dev",
            "--ro-bind", info.path, "/.flatpak-info",
            "--bind", busSocket, busSocket, "--bind", folder.path, folder.path,
            "--", proxyExecutable, "--fd=1", "unix:path=\(busSocket)", socket, "--filter", "--own=\(appID)", "--own=\(appID).*",
        ] + talk.map { "--talk=\($0)" }
        let process = try ChildProcess(bwrap, arguments)
        guard await process.waitForOutput(containing: "x") else {
            throw TestSupportError("xdg-dbus-proxy did not get ready: \(process.output)")
        }
        return (process, socket)
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
