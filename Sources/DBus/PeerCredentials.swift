import Foundation
import Glibc

/// What the message bus knows about the process behind a connection
/// (`org.freedesktop.DBus.GetConnectionCredentials`).
public struct PeerCredentials: Sendable {
    public var processID: Int32?
    public var userID: UInt32?
    /// A pidfd for the process, which cannot be reused like a PID: offered by dbus-daemon ≥ 1.15.
    public var processFD: UnixFD?
    /// The Linux security label (AppArmor: "snap.NAME.APP (enforce)"), when the bus has one.
    public var securityLabel: String?

    public init(processID: Int32? = nil, userID: UInt32? = nil, processFD: UnixFD? = nil, securityLabel: String? = nil) {
        self.processID = processID
        self.userID = userID
        self.processFD = processFD
        self.securityLabel = securityLabel
    }
}

extension PeerCredentials {
    /// From the reply of `GetConnectionCredentials`.
    init(reply: Message) throws {
        guard let first = try reply.arguments().first else { throw DBusError.failed("GetConnectionCredentials returned nothing") }
        let entries = try VarDict(first, context: "GetConnectionCredentials").entries
        self.init()
        if case .uint32(let pid)? = entries["ProcessID"] { processID = Int32(bitPattern: pid) }
        if case .uint32(let uid)? = entries["UnixUserID"] { userID = uid }
        if case .unixFD(let fd)? = entries["ProcessFD"] { processFD = fd }
        if case .array(_, let bytes)? = entries["LinuxSecurityLabel"] {
            // A NUL-terminated byte string.
            let label = bytes.compactMap { value -> UInt8? in if case .byte(let byte) = value { byte } else { nil } }
            securityLabel = String(decoding: label.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension Connection {
    /// The credentials of the connection that owns `name`.
    public func credentials(of name: String) async throws -> PeerCredentials {
        try await Handoff.value { deliver in credentials(of: name, then: deliver) }
    }

    /// Which app is behind the connection `name`, found the way xdg-desktop-portal finds it.
    ///
    /// PID reuse: a PID is only trusted while its process lives. With a pidfd (dbus-daemon ≥ 1.15)
    /// the process is known to be alive after the read; without one, the connection is asked for
    /// again after the read: a process that exited has left the bus, so a PID reused by another
    /// process cannot still stand for `name`.
    public func peerApp(of name: String) async throws -> PeerApp {
        try await Handoff.value { deliver in peerApp(of: name, then: deliver) }
    }

    /// `peerApp(of:)` with the answer handed to `deliver` on the queue: every step is a reply the
    /// queue receives, so identifying a caller never waits for a thread of the cooperative pool.
    func peerApp(of name: String, then deliver: @escaping @Sendable (Result<PeerApp, Error>) -> Void) {
        credentials(of: name) { [weak self] result in
            do {
                let credentials = try result.get()
                guard let pid = credentials.processID ?? credentials.processFD.flatMap(PeerApp.processID(ofPidFD:)) else {
                    throw DBusError.failed("the bus does not know the process behind \(name)")
                }
                // /proc is read on the queue: a few hundred bytes the kernel makes up, no disk.
                let app = try PeerApp.identify(processID: pid, securityLabel: credentials.securityLabel)
                if let pidfd = credentials.processFD {
                    guard PeerApp.isAlive(pidFD: pidfd) else { throw DBusError.failed("\(name) left while being identified") }
                    return deliver(.success(app))
                }
                guard let self else { throw DBusError.disconnected("the connection is gone") }
                callBus("GetNameOwner", [.string(name)]) { owner in
                    if case .failure = owner { return deliver(.failure(DBusError.failed("\(name) left while being identified"))) }
                    deliver(.success(app))
                }
            } catch {
                deliver(.failure(error))
            }
        }
    }

    private func credentials(of name: String, then deliver: @escaping @Sendable (Result<PeerCredentials, Error>) -> Void) {
        callBus("GetConnectionCredentials", [.string(name)]) { reply in
            deliver(Result { try PeerCredentials(reply: try reply.get()) })
        }
    }
}

/// The app behind a bus connection: a host (unsandboxed) program, or a sandboxed app with the
/// identity its sandbox gives it. A connection's app never changes.
public enum PeerApp: Sendable, Hashable, CustomStringConvertible {
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

    public var description: String { self == .host ? "a host app" : appID }

    /// Identifies the process `pid` by the marks its sandbox leaves: `/.flatpak-info` in its root,
    /// or an AppArmor label `snap.NAME.*`. No mark: a host app.
    public static func identify(processID pid: Int32, securityLabel: String? = nil) throws -> PeerApp {
        if let info = try readFlatpakInfo(processID: pid) {
            guard let id = flatpakAppID(fromInfo: info) else {
                throw DBusError.failed("process \(pid) runs in a Flatpak sandbox whose .flatpak-info names no app")
            }
            return .flatpak(id: id)
        }
        let label = securityLabel ?? (try? String(contentsOfFile: "/proc/\(pid)/attr/current", encoding: .utf8))
        if let label, let name = snapName(fromAppArmorLabel: label) { return .snap(name: name) }
        return .host
    }

    /// `/proc/PID/root/.flatpak-info`, read through a descriptor of `/proc/PID` so that every read
    /// is about the same process; nil when there is none (not a Flatpak).
    static func readFlatpakInfo(processID pid: Int32) throws -> String? {
        let directory = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw DBusError.failed("cannot look at process \(pid): \(String(cString: strerror(errno)))") }
        defer { close(directory) }
        let file = openat(directory, "root/.flatpak-info", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if file < 0 {
            if errno == ENOENT { return nil }
            throw DBusError.failed("cannot read the sandbox information of process \(pid): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: file, closeOnDealloc: true)
        // A keyfile of a few hundred bytes; more than 64 KiB is not a .flatpak-info.
        let data = try handle.read(upToCount: 65_536) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// `name=` in the `[Application]` group of a keyfile; nil when absent or not a valid app id.
    static func flatpakAppID(fromInfo info: String) -> String? {
        var group = ""
        for rawLine in info.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if group == "Application", let equals = line.firstIndex(of: "="),
                      line[..<equals].trimmingCharacters(in: .whitespaces) == "name" {
                let id = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
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

    /// The PID a pidfd stands for, from `/proc/self/fdinfo` ("Pid:\tN"; -1 once the process is gone).
    static func processID(ofPidFD fd: UnixFD) -> Int32? {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(fd.rawValue)", encoding: .utf8) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("Pid:") {
            if let pid = Int32(line.dropFirst(4).trimmingCharacters(in: .whitespaces)), pid > 0 { return pid }
        }
        return nil
    }

    /// Whether the process of a pidfd has not been reaped: until it is, its PID cannot be reused.
    static func isAlive(pidFD fd: UnixFD) -> Bool {
        processID(ofPidFD: fd) != nil
    }
}
