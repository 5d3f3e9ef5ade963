import DBus
import DBusTestSupport
import Foundation
import Logging
import MonkeyCallAPI
@testable import MonkeyCallKit
import TelephonyCore
import TelephonyService
import Testing

/// A private bus with the service running in this process; providers and
/// controllers made with MonkeyCallKit talk to it over real connections.
final class KitFixture: @unchecked Sendable {
    let bus: PrivateBus
    private(set) var service: TelephonyService?
    /// One process's service connection: providers and controllers made here share it, as in an app.
    let serviceConnection: ServiceConnection
    /// Every change to every call's properties since the fixture started.
    private var callChanges: SignalRecorder!
    private let watcher: Connection

    /// `manualClock`: the service's time stands still until `advanceClock(by:)`.
    init(actionTimeout: Double? = nil, manualClock: Bool = false, startService: Bool = true) async throws {
        bus = try await PrivateBus.start()
        serviceConnection = try ServiceConnection(address: bus.address)
        watcher = try Connection(address: bus.address)
        callChanges = try await SignalRecorder(watcher,
                                               MatchRule(pathNamespace: Telephony1.rootPath.appending("Call"), interface: "org.freedesktop.DBus.Properties",
                                                         member: "PropertiesChanged"))
        if startService { try await self.startService(actionTimeout: actionTimeout, manualClock: manualClock) }
    }

    // Released with the fixture: the bus stops on a thread of its own (PrivateBus.deinit).

    func startService(actionTimeout: Double? = nil, manualClock: Bool = false) async throws {
        var options = ServiceOptions()
        options.actionTimeout = actionTimeout ?? Deadlines.serviceTimeout(10, manualClock: manualClock)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let clock = manualClock ? ManualClock(now: UInt64(Date().timeIntervalSince1970 * 1_000_000)) : nil
        let service = await TelephonyService(connection: try Connection(address: bus.address, queue: TelephonyActor.queue), options: options, clock: clock, logger: logger)
        try await service.start()
        try await watcher.subscribeToTelephony()
        self.service = service
    }

    /// Moves the manual clock forward on the service's queue, the executor its timers run on:
    /// the timeouts that fall due fire before this returns.
    func advanceClock(by seconds: Double) async {
        guard let service else { preconditionFailure("no service: start it first") }
        await service.onManualClock { $0.advance(by: seconds) }
    }

    /// A provider with a recording delegate, registered (its `providerDidBegin` seen).
    func provider(_ name: String = "Monkey", queue: DispatchQueue? = nil,
                  configure: (CXProviderConfiguration) -> Void = { _ in }) async throws -> (CXProvider, RecordingDelegate) {
        let configuration = CXProviderConfiguration(localizedName: name)
        configure(configuration)
        let provider = CXProvider(configuration: configuration, serviceConnection: serviceConnection)
        let delegate = RecordingDelegate(queue: queue)
        provider.setDelegate(delegate, queue: queue)
        if service != nil {
            let began = await delegate.events.next(timeout: .seconds(10)) { if case .began = $0 { true } else { false } }
            try #require(began != nil, "providerDidBegin did not come")
        }
        return (provider, delegate)
    }

    /// A new fixture and a provider registered on it: how most tests begin.
    static func withProvider(manualClock: Bool = false,
                             configure: (CXProviderConfiguration) -> Void = { _ in }) async throws -> (KitFixture, CXProvider, RecordingDelegate) {
        let fixture = try await KitFixture(manualClock: manualClock)
        let (provider, delegate) = try await fixture.provider(configure: configure)
        return (fixture, provider, delegate)
    }

    /// A controller in this process, or with `ownConnection`, as another process would have it.
    func controller(ownConnection: Bool = false) throws -> CXCallController {
        CXCallController(serviceConnection: ownConnection ? try ServiceConnection(address: bus.address) : serviceConnection, error: nil, queue: nil)
    }

    /// A property of a call, read straight from the service.
    func callProperty(_ uuid: UUID, _ name: String) async throws -> DBusValue? {
        let reply = try await serviceConnection.call(Telephony1.callPath(uuid.uuidString), "org.freedesktop.DBus.Properties", "Get",
                                        [.string(Telephony1.Call.interface), .string(name)])
        return reply.first?.unwrappedVariant
    }

    /// Waits until the service announces that the call's `name` became `value`.
    func waitFor(_ uuid: UUID, _ name: String, _ value: DBusValue, timeout: Duration = .seconds(10)) async -> Bool {
        let path = Telephony1.callPath(uuid.uuidString)
        return await callChanges.buffer.next(timeout: timeout) { message in
            message.path == path && ((try? message.arguments())?.dropFirst().first?.vardict?[name]) == value
        } != nil
    }

    func waitFor(_ uuid: UUID, state: String) async -> Bool {
        await waitFor(uuid, "State", .string(state))
    }

    func state(_ uuid: UUID) async -> String? {
        guard case .string(let state)? = try? await callProperty(uuid, "State") else { return nil }
        return state
    }
}

/// What a provider's delegate heard, in order.
enum ProviderEvent: Sendable {
    case began, reset
    case perform(CXCallAction)
    case timedOut(CXAction)
    case activated, deactivated
    case showApp(UUID)
}

/// A delegate that records every callback; it fulfils, fails or keeps the actions it gets.
final class RecordingDelegate: CXProviderDelegate, @unchecked Sendable {
    enum Mode { case fulfill, fail, keep }
    let events = EventBuffer<ProviderEvent>()
    private let lock = NSLock()
    private var _mode = Mode.fulfill
    private let key = DispatchSpecificKey<Bool>()
    private let queue: DispatchQueue?
    /// Callbacks that came on another queue than the one chosen.
    private(set) var wrongQueue = 0

    var mode: Mode {
        get { lock.withLock { _mode } }
        set { lock.withLock { _mode = newValue } }
    }

    init(queue: DispatchQueue?) {
        self.queue = queue
        queue?.setSpecific(key: key, value: true)
    }

    private func record(_ event: ProviderEvent) {
        if queue != nil, DispatchQueue.getSpecific(key: key) != true { lock.withLock { wrongQueue += 1 } }
        events.append(event)
    }

    private func handle(_ action: CXCallAction) {
        record(.perform(action))
        switch mode {
        case .fulfill: action.fulfill()
        case .fail: action.fail()
        case .keep: break
        }
    }

    func providerDidReset(_ provider: CXProvider) { record(.reset) }
    func providerDidBegin(_ provider: CXProvider) { record(.began) }
    func provider(_ provider: CXProvider, perform action: CXStartCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXEndCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXSetGroupCallAction) { handle(action) }
    func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction) { handle(action) }
    func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) { record(.timedOut(action)) }
    func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) { record(.activated) }
    func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) { record(.deactivated) }
    func provider(_ provider: CXProvider, didRequestShowAppFor callUUID: UUID) { record(.showApp(callUUID)) }

    /// The next action of type `T` the provider was asked to perform.
    func next<T: CXCallAction>(_ type: T.Type, timeout: Duration = .seconds(10)) async -> T? {
        let event = await events.next(timeout: timeout) { if case .perform(let action) = $0 { action is T } else { false } }
        if case .perform(let action)? = event { return action as? T }
        return nil
    }

    func nextEvent(timeout: Duration = .seconds(10), _ predicate: @escaping (ProviderEvent) -> Bool) async -> ProviderEvent? {
        await events.next(timeout: timeout, where: predicate)
    }

    func waitFor(_ name: String, timeout: Duration = .seconds(10)) async -> Bool {
        await events.next(timeout: timeout) { event in
            switch (name, event) {
            case ("began", .began), ("reset", .reset), ("activated", .activated), ("deactivated", .deactivated): true
            default: false
            }
        } != nil
    }
}

/// Records what a call observer's delegate hears.
final class RecordingObserver: CXCallObserverDelegate, @unchecked Sendable {
    let changes = EventBuffer<CXCall>()
    func callObserver(_ callObserver: CXCallObserver, callChanged call: CXCall) { changes.append(call) }

    func next(_ uuid: UUID, timeout: Duration = .seconds(10), where predicate: @escaping (CXCall) -> Bool) async -> CXCall? {
        await changes.next(timeout: timeout) { $0.uuid == uuid && predicate($0) }
    }
}

/// The error `body` throws, or nil.
func caught(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

