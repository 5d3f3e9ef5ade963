import BoundedFile
import FoundationEssentials
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
    /// The PID a pidfd stands for, from `/proc/self/fdinfo` ("Pid:\tN"; -1 once the process is gone).
    public static func processID(ofPidFD fd: UnixFD) -> Int32? {
        // BoundedFile: FoundationEssentials' reader leaks on a failed read (issue 53).
        guard let info = BoundedFile.text("/proc/self/fdinfo/\(fd.rawValue)", limit: 4096) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("Pid:") {
            if let pid = Int32(line.dropFirst(4).filter { !$0.isWhitespace }), pid > 0 { return pid }
        }
        return nil
    }

    /// "UID:PID:START" for the process `pid`: its start time (field 22 of /proc/PID/stat, in clock
    /// ticks since boot) tells it from a later process given the same PID. nil when /proc has no such process.
    public static func processKey(pid: Int32, userID: UInt32?) -> String? {
        guard let stat = BoundedFile.text("/proc/\(pid)/stat", limit: 4096),
              let commandEnd = stat.lastIndex(of: ")") else { return nil }
        // After "PID (COMMAND) ": the state is field 3, so the start time is the 20th field from here.
        let fields = stat[stat.index(after: commandEnd)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return "\(userID.map(String.init) ?? "?"):\(pid):\(fields[19])"
    }

    /// Whether the process of a pidfd has not been reaped: until it is, its PID cannot be reused.
    static func isAlive(pidFD fd: UnixFD) -> Bool {
        processID(ofPidFD: fd) != nil
    }

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

    /// Who is behind the connection `name`: `identify` reads it from the process and the bus's
    /// credentials (and whatever /proc says of the process).
    ///
    /// PID reuse: a PID is only trusted while its process lives. With a pidfd (dbus-daemon ≥ 1.15)
    /// the process is known to be alive after the read; without one, the connection is asked for
    /// again after the read: a process that exited has left the bus, so a PID reused by another
    /// process cannot still stand for `name`.
    public func identify<Identity: Sendable>(_ name: String, with identify: @escaping @Sendable (Int32, PeerCredentials) throws -> Identity) async throws -> Identity {
        try await Handoff.value { deliver in self.identify(name, with: identify, then: deliver) }
    }

    /// `identify(_:with:)` with the answer handed to `deliver` on the queue: every step is a reply
    /// the queue receives, so identifying a caller never waits for a thread of the cooperative pool.
    func identify<Identity>(_ name: String, with identify: @escaping (Int32, PeerCredentials) throws -> Identity,
                            then deliver: @escaping @Sendable (Result<Identity, Error>) -> Void) {
        // Called on the queue, where the credentials' reply arrives.
        let identify = UncheckedSendable(identify)
        credentials(of: name) { [weak self] result in
            do {
                let credentials = try result.get()
                guard let pid = credentials.processID ?? credentials.processFD.flatMap(PeerCredentials.processID(ofPidFD:)) else {
                    throw DBusError.failed("the bus does not know the process behind \(name)")
                }
                // /proc is read on the queue: a few hundred bytes the kernel makes up, no disk.
                let identity = UncheckedSendable(try identify.value(pid, credentials))
                if let pidfd = credentials.processFD {
                    guard PeerCredentials.isAlive(pidFD: pidfd) else { throw DBusError.failed("\(name) left while being identified") }
                    return deliver(.success(identity.value))
                }
                guard let self else { throw DBusError.disconnected("the connection is gone") }
                callBus("GetNameOwner", [.string(name)]) { owner in
                    if case .failure = owner { return deliver(.failure(DBusError.failed("\(name) left while being identified"))) }
                    deliver(.success(identity.value))
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

