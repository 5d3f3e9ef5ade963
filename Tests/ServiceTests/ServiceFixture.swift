import DBus
import DBusTestSupport
import Foundation
import Logging
import TelephonyCore
import MonkeyCallAPI
import TelephonyService
import Testing

/// A private bus with the service running in this process, and helpers that
/// play providers and the user's controller over real connections.
final class ServiceFixture: @unchecked Sendable {
    let bus: PrivateBus
    let service: TelephonyService
    let controller: Connection
    let controllerSignals: SignalRecorder

    let databasePath: String
    /// What the service logged at warning level and above.
    let warnings = EventBuffer<String>()
    /// The notification server on the bus, when the fixture was made with `notifications`.
    let notificationServer: NotificationServer?

    /// `manualClock`: the service's time stands still (at the time the fixture was made) until `advanceClock(by:)`.
    /// `configure`: further options (the system bus, media pausing).
    /// `notifications`: a test notification server on the bus, and the service posts to it.
    /// `bus`: a bus the test started first (with programs already on it); else a new one.
    init(actionTimeout: Double? = nil, ringTimeout: Double? = nil, limits: SwitchboardLimits = .init(), manualClock: Bool = false,
         notifications: Bool = false, bus startedBus: PrivateBus? = nil, configure: (inout ServiceOptions) -> Void = { _ in }) async throws {
        if let startedBus { bus = startedBus } else { bus = try await PrivateBus.start() }
        notificationServer = notifications ? try await NotificationServer(address: bus.address) : nil
        let notifier: BusNotifier? = notifications ? try await BusNotifier(address: bus.address) : nil
        databasePath = bus.directory.appendingPathComponent("monkeycall.sqlite").path
        var options = ServiceOptions()
        options.actionTimeout = actionTimeout ?? Deadlines.serviceTimeout(10, manualClock: manualClock)
        options.ringTimeout = ringTimeout ?? Deadlines.serviceTimeout(45, manualClock: manualClock)
        options.limits = limits
        options.dataDirectory = bus.directory.appendingPathComponent("data").path
        configure(&options)
        let warnings = self.warnings
        var logger = Logger(label: "test") { _ in WarningRecorder(warnings) }
        logger.logLevel = .warning
        // With `manualClock` no timeout fires until `advanceClock(by:)`.
        let clock = manualClock ? ManualClock(now: UInt64(Date().timeIntervalSince1970 * 1_000_000)) : nil
        service = await TelephonyService(connection: try Connection(address: bus.address, queue: TelephonyActor.queue), options: options, clock: clock, notifier: notifier,
                                   databasePath: databasePath, logger: logger)
        try await service.start()
        controller = try Connection(address: bus.address)
        controllerSignals = try await SignalRecorder(controller, MatchRule(interface: Telephony1.CallController.interface))
        // The user's side watches everything, as `monkeycall watch` does.
        try await controller.subscribeToTelephony()
    }

    // Released with the fixture: the bus stops on a thread of its own (PrivateBus.deinit).

    /// Moves the manual clock forward on the service's queue, the executor its timers run on:
    /// the ring and action timeouts that fall due fire before this returns.
    func advanceClock(by seconds: Double) async {
        await service.onManualClock { $0.advance(by: seconds) }
    }

    /// The service's timers (ring and action timeouts) that have neither fired nor been cancelled.
    func pendingTimers() async -> Int {
        await service.onManualClock { $0.pendingTaskCount }
    }

    func provider(_ name: String, _ configuration: [String: DBusValue] = [:]) async throws -> TestProvider {
        try await TestProvider(bus: bus, name: name, configuration: configuration)
    }

    @discardableResult
    func control(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                                  member: member, arguments)
    }

    /// RequestTransaction with `(kind, args)` pairs.
    @discardableResult
    func request(_ actions: [(String, [String: DBusValue])]) async throws -> String {
        let value = DBusValue.array(element: "(sa{sv})", actions.map { .structure([.string($0.0), .vardict($0.1)]) })
        guard case .string(let id)? = try await control("RequestTransaction", [value]).first else { throw TestSupportError("no transaction id") }
        return id
    }

    /// Waits for TransactionCompleted of `transaction` and returns (success, error name).
    func completion(of transaction: String, timeout: Duration = .seconds(10)) async -> (Bool, String)? {
        guard let message = await controllerSignals.next("TransactionCompleted", timeout: timeout, where: { $0.first == .string(transaction) }),
              let args = try? message.arguments(), case .bool(let success) = args[1], case .string(let name) = args[2] else { return nil }
        return (success, name)
    }

    /// A method of the root object's Recents or Favorites interface.
    @discardableResult
    func root(_ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: interface, member: member, arguments)
    }

    func callProperty(_ uuid: String, _ name: String) async throws -> DBusValue? {
        let reply = try await controller.call(destination: Telephony1.busName, path: Telephony1.callPath(uuid),
                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                              [.string(Telephony1.Call.interface), .string(name)])
        return reply.first?.unwrappedVariant
    }

    func state(_ uuid: String) async -> String? {
        guard case .string(let state)? = try? await callProperty(uuid, "State") else { return nil }
        return state
    }

    func managedPaths() async throws -> [ObjectPath] {
        let reply = try await controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                              interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let entries)? = reply.first else { return [] }
        return entries.compactMap { if case .objectPath(let path) = $0.key { path } else { nil } }
    }
}

/// Records warnings and errors; errors also go to stderr, for whoever reads a failed run.
struct WarningRecorder: LogHandler {
    let buffer: EventBuffer<String>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    init(_ buffer: EventBuffer<String>) { self.buffer = buffer }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        buffer.append("\(event.level): \(event.message)")
        if event.level >= .error { FileHandle.standardError.write(Data("\(event.level): \(event.message)\n".utf8)) }
    }
}

/// A VOIP app played over its own connection: registers, reports calls and
/// records the signals the service sends it.
final class TestProvider: @unchecked Sendable {
    let connection: Connection
    let path: ObjectPath
    let signals: SignalRecorder

    init(bus: PrivateBus, name: String, configuration: [String: DBusValue]) async throws {
        connection = try Connection(address: bus.address)
        signals = try await SignalRecorder(connection, MatchRule(interface: Telephony1.Provider.interface))
        var config = configuration
        config["Name"] = .string(name)
        let reply = try await connection.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                              interface: Telephony1.Manager.interface, member: "RegisterProvider", [.vardict(config)])
        guard case .objectPath(let path)? = reply.first else { throw TestSupportError("no provider path") }
        self.path = path
    }

    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: Telephony1.busName, path: path, interface: Telephony1.Provider.interface,
                                  member: member, arguments)
    }

    /// Reports an incoming call and returns its UUID (lower case).
    @discardableResult
    func reportIncoming(_ handle: String = "alice", uuid: String = UUID().uuidString, update: [String: DBusValue] = [:]) async throws -> String {
        var fields = update
        fields["Handle"] = fields["Handle"] ?? .string(handle)
        try await call("ReportNewIncomingCall", [.string(uuid), .vardict(fields)])
        return uuid.lowercased()
    }

    struct PerformedAction {
        let id: String, kind: String, call: String, args: [String: DBusValue]
    }

    /// The next PerformAction (of `kind`, when given).
    func nextAction(_ kind: String? = nil, timeout: Duration = .seconds(10)) async -> PerformedAction? {
        guard let message = await signals.next("PerformAction", timeout: timeout, where: { kind == nil || $0[1] == .string(kind!) }),
              let args = try? message.arguments(), args.count == 4,
              case .string(let id) = args[0], case .string(let kind) = args[1], case .string(let call) = args[2],
              let dict = args[3].vardict else { return nil }
        return PerformedAction(id: id, kind: kind, call: call, args: dict)
    }

    func fulfill(_ action: PerformedAction?) async throws {
        let id = try #require(action).id
        try await call("FulfillAction", [.string(id), .vardict([:])])
    }

    /// The next `kind` action, fulfilled.
    @discardableResult
    func perform(_ kind: String) async throws -> PerformedAction {
        let action = try #require(await nextAction(kind), "no \(kind) action arrived")
        try await fulfill(action)
        return action
    }
}
