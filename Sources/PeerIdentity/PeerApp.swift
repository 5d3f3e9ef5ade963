import BoundedFile
import DBus
import FoundationEssentials
import Glibc
import ScreenText

/// The app behind a bus connection: a host (unsandboxed) program, or a sandboxed app with the
/// identity its sandbox gives it. A connection's app never changes.
public enum PeerApp: CallerIdentity, Hashable {
    /// Not sandboxed: the user's own programs, trusted as far as the session bus is.
    case host
    /// A Flatpak app: `[Application] name=` of its `/.flatpak-info`.
    case flatpak(id: String)
    /// A Snap: the NAME of its AppArmor profile `snap.NAME.APP`.
    case snap(name: String)

    /// The Flatpak app id, `snap.NAME`, or "" for a host app.
    public var appID: String {
        switch self {
        case .host: ""
        case .flatpak(let id): id
        case .snap(let name): "snap.\(name)"
        }
    }

    public var isSandboxed: Bool { self != .host }

    public func isSame(as other: any CallerIdentity) -> Bool { (other as? PeerApp) == self }

    public var description: String { self == .host ? "a host app" : appID }

    /// A sandboxed app by its app id and connection; a host caller by its connection alone.
    public func describe(connection name: String) -> String { isSandboxed ? "\(self) (\(name))" : name }

    /// Who pays for what a caller of this app holds (its subscriptions, the bytes of its calls): a
    /// sandboxed app is its app however many connections it opens; a host caller is its process
    /// (`process`: user, PID and start time), however many connections or names it uses. nil:
    /// neither is known (its connection then).
    public func account(process: String?) -> String? {
        isSandboxed ? "app \(self)" : process.map { "process \($0)" }
    }

    /// Identifies the process `pid` by the marks its sandbox leaves: `/.flatpak-info` in its root,
    /// or an AppArmor label `snap.NAME.*`. No mark: a host app.
    public static func identify(processID pid: Int32, securityLabel: String? = nil) throws -> PeerApp {
        if let info = try readFlatpakInfo(processID: pid) {
            guard let id = flatpakAppID(fromInfo: info) else {
                throw DBusError.failed("process \(pid) runs in a Flatpak sandbox whose .flatpak-info names no app")
            }
            return .flatpak(id: id)
        }
        // Without a security module the read fails (EINVAL), for every host caller: BoundedFile's
        // read leaves nothing behind, where FoundationEssentials' leaked 4 KiB each time (issue 53).
        let label = securityLabel ?? BoundedFile.text("/proc/\(pid)/attr/current", limit: 4096)
        if let label, let name = snapName(fromAppArmorLabel: label) { return .snap(name: name) }
        return .host
    }

    /// `/proc/PID/root/.flatpak-info`, read through a descriptor of `/proc/PID` so that every read
    /// is about the same process; nil when there is none (not a Flatpak).
    static func readFlatpakInfo(processID pid: Int32) throws -> String? {
        let directory = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw DBusError.failed("cannot look at process \(pid): \(String(cString: strerror(errno)))") }
        defer { close(directory) }
        // A keyfile of a few hundred bytes; more than 64 KiB is not a .flatpak-info.
        do {
            let info = try BoundedFile.read("root/.flatpak-info", relativeTo: directory, limit: 65_536, followLinks: false)
            return String(decoding: info, as: UTF8.self)
        } catch where error.reason == .system(ENOENT) {
            return nil
        } catch {
            throw DBusError.failed("cannot read the sandbox information of process \(pid): \(error)")
        }
    }

    /// `name=` in the `[Application]` group of a keyfile; nil when absent or not a valid app id.
    static func flatpakAppID(fromInfo info: String) -> String? {
        var group = ""
        for rawLine in info.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingWhitespace()
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if group == "Application", let equals = line.firstIndex(of: "="),
                      line[..<equals].trimmingWhitespace() == "name" {
                let id = line[line.index(after: equals)...].trimmingWhitespace()
                return isValidAppID(id) ? id : nil
            }
        }
        return nil
    }

    /// Flatpak's rule: a D-Bus-name-like reverse-DNS id of at least three elements, ≤ 255 bytes.
    static func isValidAppID(_ id: String) -> Bool {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard id.utf8.count <= 255, elements.count >= 3 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return element.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-")
            }
        }
    }

    /// "snap.NAME.APP (enforce)" → NAME.
    static func snapName(fromAppArmorLabel label: String) -> String? {
        let profile = label.split(separator: " ").first.map(String.init) ?? ""
        let parts = profile.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "snap", !parts[1].isEmpty else { return nil }
        return String(parts[1])
    }
}

extension Caller {
    public init(name: String, app: PeerApp) {
        self.init(name: name, identity: app, account: app.account(process: nil))
    }

    /// The app behind the caller (a host app under a policy that does not identify apps).
    public var app: PeerApp { identity as? PeerApp ?? .host }
}

extension Connection {
    /// Which app is behind the connection `name`, found the way xdg-desktop-portal finds it.
    public func peerApp(of name: String) async throws -> PeerApp {
        try await identify(name) { pid, credentials in try PeerApp.identify(processID: pid, securityLabel: credentials.securityLabel) }
    }
}

extension ObjectServer {
    /// The app behind `name`, when a call from it has been identified and it is still on the bus.
    public func identifiedApp(of name: String) -> PeerApp? {
        identity(of: name).map { $0 as? PeerApp ?? .host }
    }
}
