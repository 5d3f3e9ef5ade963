import DBus
import Foundation

/// The system bus a headless GNOME Shell needs, private to one stage: GNOME Shell dies at start
/// without a system bus ("Could not connect" in loginManager.js), and offers a lock screen only when
/// GDM answers on it. On it: logind from the machine's python3-dbusmock template, with one active
/// session `c1` for this user and `/org/freedesktop/login1/user/self` naming it as the user's
/// display session (which the shell reads to find its session), and `DisplayManagerStandIn`. The
/// same serves GNOME Shell 48 in Debian 13's root: the bus's socket is under /tmp, which the root
/// shares.
final class GnomeShellSystemBus: @unchecked Sendable {
    static let python = "/usr/bin/python3"
    /// The template that python3-dbusmock installs; its absence means the package is missing.
    static let logindTemplate = "/usr/lib/python3/dist-packages/dbusmock/templates/logind.py"
    static let sessionID = "c1"
    static let sessionPath: ObjectPath = "/org/freedesktop/login1/session/c1"

    let bus: PrivateBus
    private let logind: ChildProcess
    private let displayManager: DisplayManagerStandIn
    /// Ours, for the mock's own methods (AddSession, the session's Unlock).
    private let connection: Connection

    var address: String { bus.address }

    private init(bus: PrivateBus, logind: ChildProcess, displayManager: DisplayManagerStandIn, connection: Connection) {
        self.bus = bus
        self.logind = logind
        self.displayManager = displayManager
        self.connection = connection
    }

    /// `displayManagerVersion`: what GDM's stand-in says it is (the shell's own version, as GDM
    /// and the shell come together).
    static func start(displayManagerVersion: String = "43.0") async throws -> GnomeShellSystemBus {
        let bus = try await PrivateBus.start()
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let logind = try ChildProcess(python, ["-m", "dbusmock", "--system", "--template", "logind"], environment: environment)
        let displayManager = try await DisplayManagerStandIn(address: bus.address, version: displayManagerVersion)
        let connection = try Connection(address: bus.address)
        try await connection.waitForName("org.freedesktop.login1", startedBy: logind, timeout: .seconds(30))
        let system = GnomeShellSystemBus(bus: bus, logind: logind, displayManager: displayManager, connection: connection)
        try await system.addSession()
        return system
    }

    /// This user's session, active on seat0, and the `user/self` object the shell asks for.
    private func addSession() async throws {
        let uid = getuid()
        let user = getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "root"
        try await mock("/org/freedesktop/login1", "AddSession",
                       [.string(Self.sessionID), .string("seat0"), .uint32(uid), .string(user), .bool(true)])
        let session = DBusValue.structure([.string(Self.sessionID), .objectPath(Self.sessionPath)])
        let properties: [String: DBusValue] = [
            "Display": session,
            "Sessions": .array(element: "(so)", [session]),
            "Name": .string(user),
            "UID": .uint32(uid),
            "State": .string("active"),
        ]
        try await mock("/org/freedesktop/login1", "AddObject",
                       [.string("/org/freedesktop/login1/user/self"), .string("org.freedesktop.login1.User"),
                        .vardict(properties), .array(element: "(ssss)", [])])
        // The template's GetUser adds the uid (a UInt32) to a string, and raises: GNOME Shell 48's
        // screen-time history (on by default) asks for the user's object through it at start, and
        // without one logs "Could not get a proxy for user" and leaves its state machine half
        // started. This session has one user: `user/self`.
        try await mock("/org/freedesktop/login1", "AddMethod",
                       [.string("org.freedesktop.login1.Manager"), .string("GetUser"), .string("u"), .string("o"),
                        .string("ret = '/org/freedesktop/login1/user/self'")])
    }

    /// What `loginctl unlock-session` does: the session's Unlock, which the shell's screen shield obeys.
    func unlockSession() async throws {
        try await connection.call(destination: "org.freedesktop.login1", path: Self.sessionPath,
                                  interface: "org.freedesktop.login1.Session", member: "Unlock")
    }

    private func mock(_ path: ObjectPath, _ member: String, _ arguments: [DBusValue]) async throws {
        try await connection.call(destination: "org.freedesktop.login1", path: path, interface: "org.freedesktop.DBus.Mock",
                                  member: member, arguments)
    }

    /// The mock and the bus end (the bus on a thread of its own, as PrivateBus does when released).
    func stop() {
        logind.kill()
        connection.close()
        displayManager.stop()
    }

    deinit { logind.kill() }
}

/// GDM as GNOME Shell 43 and 48 ask for it (`loginManager.js`): `Version` 3.5.91 or later makes
/// the shell offer a lock screen, and `RegisterSession` is called once the session has started.
/// Served from the test process: a Python mock would only add a process to start.
final class DisplayManagerStandIn: @unchecked Sendable {
    static let name = "org.gnome.DisplayManager"
    static let path: ObjectPath = "/org/gnome/DisplayManager/Manager"
    static let interface = "org.gnome.DisplayManager.Manager"

    let connection: Connection
    let objects: ObjectServer

    init(address: String, version: String) async throws {
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        try objects.export(Self.path, [
            Interface(Self.interface) {
                Property("Version", "s") { .string(version) }
                Method("RegisterSession", in: ["details": "a{sv}"]) { _ in .empty }
            },
        ])
        guard try await connection.requestName(Self.name) == .primaryOwner else { throw TestSupportError("\(Self.name) is taken") }
    }

    func stop() { connection.close() }

    deinit { connection.close() }
}

extension Connection {
    /// Waits until `name` has an owner on this connection's bus, as the owner's start takes (a
    /// NameOwnerChanged, not a poll); fails at once when `process`, which is to take it, exits first.
    func waitForName(_ name: String, startedBy process: ChildProcess?, timeout: Duration) async throws {
        let changes = try await SignalRecorder(self, MatchRule(sender: Connection.busName, interface: Connection.busName,
                                                               member: "NameOwnerChanged", arg0: name))
        defer { changes.cancel() }
        if try await nameOwner(name) != nil { return }
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        // In slices of a second, to notice the process's exit between them.
        while ContinuousClock.now < deadline {
            if await changes.next("NameOwnerChanged", timeout: .seconds(1), where: { $0.count == 3 && $0[2] != .string("") }) != nil { return }
            if let process, !process.isRunning {
                throw TestSupportError("\(name) never appeared: its program exited: \(process.output.suffix(4000))")
            }
        }
        throw TestSupportError("\(name) did not appear within \(timeout)\(process.map { ": \($0.output.suffix(4000))" } ?? "")")
    }
}
