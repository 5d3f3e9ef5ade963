import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The real `monkeycalld` on a private bus, with a notification server for it
/// to ring on, a controller connection, and a tally of how it answered.
final class FuzzedDaemon: @unchecked Sendable {
    let bus: PrivateBus
    let daemon: ChildProcess
    let notifications: NotificationServer
    /// The user's side: a connection that owns no provider.
    let controller: Connection
    let tally = Tally()

    /// Every call gets an answer within this, or it counts as a hang.
    static let replyDeadline: Duration = Deadlines.stretched(.seconds(20))

    /// The timeouts default to an hour: objects a test fuzzes must not end on their own, however slow the machine.
    init(actionTimeout: Double = 3600, ringTimeout: Double = 3600) async throws {
        bus = try await PrivateBus.start()
        notifications = try await NotificationServer(address: bus.address)
        controller = try Connection(address: bus.address)
        let started = try await SignalRecorder(controller, MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                                     member: "NameOwnerChanged", arg0: Telephony1.busName))
        let database = bus.directory.appendingPathComponent("monkeycall.sqlite").path
        // Warnings only: the daemon's output is kept in memory for failure messages. The fuzzer
        // registers fresh providers as fast as it can, all from this process: the registration
        // limit (which counts a host process across its Names) has tests of its own.
        daemon = try ChildProcess(BuiltProducts.path("monkeycalld"),
                                  ["--address", bus.address, "--database", database, "--log-level", "warning", "--registration-rate", "0",
                                   "--action-timeout", "\(actionTimeout)", "--ring-timeout", "\(ringTimeout)"],
                                  environment: bus.environment)
        guard await started.next(timeout: .seconds(30)) != nil else {
            throw TestSupportError("monkeycalld did not take \(Telephony1.busName): \(daemon.output)")
        }
        started.cancel()
        try await controller.subscribeToTelephony()
    }

    deinit {
        daemon.kill()
        bus.stop()
    }

    /// A new connection to the bus, as another app would have.
    func connect() throws -> Connection { try Connection(address: bus.address) }

    /// Calls a method and records the outcome: the reply, or the error by name.
    @discardableResult
    func send(_ connection: Connection, _ path: ObjectPath, _ interface: String, _ member: String,
              _ arguments: [DBusValue] = []) async -> Outcome {
        let outcome: Outcome
        do {
            let message = try Message.methodCall(destination: Telephony1.busName, path: path, interface: interface, member: member)
            try message.append(arguments)
            outcome = .reply(try await connection.send(call: message, timeout: Self.replyDeadline).arguments())
        } catch {
            outcome = .error(DBusError(error))
        }
        tally.record(outcome)
        return outcome
    }

    /// The daemon still runs, answers Ping, and a whole call goes through:
    /// registered, reported, answered, fulfilled, ended, gone.
    func expectAlive(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(daemon.isRunning, "monkeycalld exited after \(context): \(daemon.output)", sourceLocation: sourceLocation)
        try #require(daemon.isRunning, sourceLocation: sourceLocation)
        _ = try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.Peer",
                                      member: "Ping", timeout: Self.replyDeadline)
        try await restoreScreening()
        let app = try await FuzzProvider(self, name: "Check")
        defer { app.connection.close() }
        let uuid = UUID().uuidString.lowercased()
        try await app.call("ReportNewIncomingCall", [.string(uuid), .vardict(["Handle": .string("alice")])])
        let answer = try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                                               member: "AnswerCall", [.string(uuid)], timeout: Self.replyDeadline)
        let action = try #require(await app.nextAction("answer"), "no answer action after \(context)", sourceLocation: sourceLocation)
        try await app.call("FulfillAction", [.string(action.id), .vardict([:])])
        let state = try await controller.call(destination: Telephony1.busName, path: Telephony1.callPath(uuid), interface: "org.freedesktop.DBus.Properties",
                                              member: "Get", [.string(Telephony1.Call.interface), .string("State")], timeout: Self.replyDeadline)
        #expect(state.first?.unwrappedVariant == .string("active"), "after \(context)", sourceLocation: sourceLocation)
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        #expect(answer.count == 1, sourceLocation: sourceLocation)
    }

    /// The end of a fuzz test: the daemon still works; the counts the README quotes.
    func conclude(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expectAlive(what, sourceLocation: sourceLocation)
        print("fuzz \(what): \(tally.total) inputs, monkeycalld still running\n\(tally.summary)")
    }

    /// Fuzzed input may have turned Do Not Disturb on or blocked everyone: the user's settings go back to their defaults.
    func restoreScreening() async throws {
        func root(_ interface: String, _ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
            try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: interface, member: member,
                                      arguments, timeout: Self.replyDeadline)
        }
        for setting in ["DoNotDisturb", "SilenceUnknownCallers"] {
            _ = try await root("org.freedesktop.DBus.Properties", "Set", [.string(Telephony1.Manager.interface), .string(setting), .variant(.bool(false))])
        }
        let blocked = try await root("org.freedesktop.DBus.Properties", "Get", [.string(Telephony1.CallDirectory.interface), .string("BlockedHandles")])
        guard case .array(_, let patterns)? = blocked.first?.unwrappedVariant else { return }
        for pattern in patterns { _ = try await root(Telephony1.CallDirectory.interface, "UnblockHandle", [pattern]) }
    }
}

/// How one call came back.
enum Outcome: Sendable {
    case reply([DBusValue])
    case error(DBusError)

    var errorName: String? { if case .error(let error) = self { error.name } else { nil } }
    var error: DBusError? { if case .error(let error) = self { error } else { nil } }
    var values: [DBusValue]? { if case .reply(let values) = self { values } else { nil } }
    /// "reply" or the error name, for counting.
    var name: String { errorName ?? "reply" }
}

/// Counts of outcomes by name, from many tasks at once.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record(_ outcome: Outcome) { lock.withLock { counts[outcome.name, default: 0] += 1 } }

    var total: Int { lock.withLock { counts.values.reduce(0, +) } }
    var byName: [String: Int] { lock.withLock { counts } }

    /// One line per name, most frequent first, for the test's output.
    var summary: String {
        byName.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "  \($0.value)\t\($0.key)" }.joined(separator: "\n")
    }
}

/// The errors a well-behaved service may answer bad input with. Anything else
/// (Failed, NoReply, Disconnected, NoMemory) means something went wrong inside.
enum ProperErrors {
    static let standard: Set<String> = [
        DBusError.Name.invalidArgs, DBusError.Name.accessDenied, DBusError.Name.limitsExceeded, DBusError.Name.unknownObject,
        DBusError.Name.unknownMethod, DBusError.Name.unknownInterface, DBusError.Name.unknownProperty, DBusError.Name.propertyReadOnly,
    ]

    static func isProper(_ name: String) -> Bool {
        standard.contains(name) || (APIError(rawValue: name) != nil && name != APIError.recentsUnavailable.rawValue)
    }
}

/// A VOIP app on its own connection: registers one provider and collects the
/// actions the service sends it.
final class FuzzProvider: @unchecked Sendable {
    let connection: Connection
    let path: ObjectPath
    let signals: SignalRecorder
    private let daemon: FuzzedDaemon

    init(_ daemon: FuzzedDaemon, name: String, configuration: [String: DBusValue] = [:]) async throws {
        self.daemon = daemon
        connection = try daemon.connect()
        signals = try await SignalRecorder(connection, MatchRule(interface: Telephony1.Provider.interface))
        var config = configuration
        config["Name"] = .string(name)
        let reply = try await connection.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.Manager.interface,
                                              member: "RegisterProvider", [.vardict(config)], timeout: FuzzedDaemon.replyDeadline)
        guard case .objectPath(let path)? = reply.first else { throw TestSupportError("no provider path") }
        self.path = path
    }

    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: Telephony1.busName, path: path, interface: Telephony1.Provider.interface,
                                  member: member, arguments, timeout: FuzzedDaemon.replyDeadline)
    }

    /// Reports a ringing call and returns its UUID.
    func reportIncoming(_ handle: String = "bob") async throws -> String {
        let uuid = UUID().uuidString.lowercased()
        try await call("ReportNewIncomingCall", [.string(uuid), .vardict(["Handle": .string(handle), "SupportsGrouping": .bool(true)])])
        return uuid
    }

    /// The next PerformAction (of `kind`, when given): its action UUID and call UUID.
    func nextAction(_ kind: String? = nil, timeout: Duration = .seconds(10)) async -> (id: String, call: String)? {
        guard let message = await signals.next("PerformAction", timeout: timeout, where: { kind == nil || $0[1] == .string(kind!) }),
              let args = try? message.arguments(), args.count == 4, case .string(let id) = args[0], case .string(let call) = args[2] else { return nil }
        return (id, call)
    }
}
