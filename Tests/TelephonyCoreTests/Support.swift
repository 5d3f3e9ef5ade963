import Foundation
import Testing
@testable import TelephonyCore

/// Records every event a switchboard emits.
final class EventLog {
    var events: [SwitchboardEvent] = []

    init(_ board: Switchboard) {
        board.onEvent = { [unowned self] in self.events.append($0) }
    }

    func clear() { events.removeAll() }

    var performed: [Action] {
        events.compactMap { if case .performAction(let a) = $0 { a } else { nil } }
    }
    var timedOut: [Action] {
        events.compactMap { if case .actionTimedOut(let a) = $0 { a } else { nil } }
    }
    var completions: [(Transaction, TelephonyError?)] {
        events.compactMap { if case .transactionCompleted(let t, let e) = $0 { (t, e) } else { nil } }
    }
    var changed: [Call] {
        events.compactMap { if case .callChanged(let c) = $0 { c } else { nil } }
    }
    var removed: [Call] {
        events.compactMap { if case .callRemoved(let c) = $0 { c } else { nil } }
    }
    var added: [Call] {
        events.compactMap { if case .callAdded(let c) = $0 { c } else { nil } }
    }
    var refused: [RefusedCall] {
        events.compactMap { if case .callRefused(let c) = $0 { c } else { nil } }
    }
    /// Audio events as "+1" (activated) and "-1" (deactivated).
    var audio: [String] {
        events.compactMap {
            switch $0 {
            case .audioSessionActivated(let p): "+\(p)"
            case .audioSessionDeactivated(let p): "-\(p)"
            default: nil
            }
        }
    }
    /// A compact trace: "added:<short>", "changed:<short>:<state>", ...
    var trace: [String] {
        events.map { event in
            switch event {
            case .providerRegistered(let p): "registered:\(p.id)"
            case .providerRemoved(let p): "removed-provider:\(p.id)"
            case .callAdded(let c): "added:\(c.uuid.short)"
            case .callChanged(let c): "changed:\(c.uuid.short):\(c.state.rawValue)"
            case .callRemoved(let c): "removed:\(c.uuid.short)"
            case .callRefused(let c): "refused:\(c.uuid.short):\(c.status.rawValue)"
            case .performAction(let a): "perform:\(a.provider):\(a.kind.name):\(a.callUUID.short)"
            case .actionTimedOut(let a): "timeout:\(a.provider):\(a.kind.name):\(a.callUUID.short)"
            case .transactionCompleted(_, let e): "completed:\(e?.name ?? "ok")"
            case .audioSessionActivated(let p): "audio+\(p)"
            case .audioSessionDeactivated(let p): "audio-\(p)"
            }
        }
    }
}

extension SwitchboardLimits {
    /// The defaults with `change` made: `.with { $0.maximumProviders = 3 }`.
    static func with(_ change: (inout SwitchboardLimits) -> Void) -> SwitchboardLimits {
        var limits = SwitchboardLimits()
        change(&limits)
        return limits
    }
}

extension UUID {
    var short: String { String(uuidString.prefix(4)).lowercased() }
    /// Deterministic UUIDs for tests: 0000000n-0000-4000-8000-000000000000.
    static func n(_ value: Int) -> UUID {
        UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", value))!
    }
}

/// A switchboard with a manual clock and an event log.
struct Fixture {
    let clock: ManualClock
    let board: Switchboard
    let log: EventLog

    init(options: SwitchboardOptions = .init()) {
        clock = ManualClock(now: 1_000_000_000_000_000)
        board = Switchboard(clock: clock, options: options)
        log = EventLog(board)
    }

    @discardableResult
    func register(_ name: String = "App", owner: String = ":1.1", _ configure: (inout ProviderConfiguration) -> Void = { _ in }) throws -> Provider {
        var config = ProviderConfiguration(name: name)
        configure(&config)
        return try board.registerProvider(owner: owner, configuration: config)
    }

    @discardableResult
    func incoming(_ provider: Provider, _ uuid: UUID, handle: String = "+15551234", _ update: CallUpdate = CallUpdate()) throws -> Call {
        var update = update
        if update.handle == nil { update.handle = Handle(type: .phoneNumber, value: handle) }
        return try board.reportNewIncomingCall(provider: provider.id, uuid: uuid, update: update)
    }

    /// Requests a transaction as the user's CLI (owns no provider).
    @discardableResult
    func request(_ requests: ActionRequest..., requester: String? = ":1.99") throws -> Transaction {
        try board.requestTransaction(requests, requester: requester)
    }

    /// The single pending action of `kind` on `uuid`.
    func pending(_ kind: String, _ uuid: UUID) -> Action? {
        board.allPendingActions.first { $0.kind.name == kind && $0.callUUID == uuid }
    }

    func fulfil(_ kind: String, _ uuid: UUID, at: UInt64 = 0) throws {
        let action = try #require(pending(kind, uuid), "no pending \(kind) on \(uuid.short)")
        try board.fulfillAction(provider: action.provider, action: action.id, at: at)
    }

    func fail(_ kind: String, _ uuid: UUID) throws {
        let action = try #require(pending(kind, uuid), "no pending \(kind) on \(uuid.short)")
        try board.failAction(provider: action.provider, action: action.id)
    }

    /// An incoming call answered and fulfilled: active.
    /// The common scene of arbitration: provider A with an active call n(1), provider B with n(2) ringing.
    static func activeAndRinging() throws -> (Fixture, Provider, Provider) {
        let (f, a, b) = try twoApps()
        try f.activeIncoming(a, .n(1))
        try f.incoming(b, .n(2))
        return (f, a, b)
    }

    /// One app with a call n(1): ringing, or active when `answered`.
    static func oneCall(answered: Bool = false) throws -> (Fixture, Provider) {
        let f = Fixture()
        let p = try f.register()
        if answered { try f.activeIncoming(p, .n(1)) } else { try f.incoming(p, .n(1)) }
        return (f, p)
    }

    /// Apps A and B, from two connections.
    static func twoApps() throws -> (Fixture, Provider, Provider) {
        let f = Fixture()
        return (f, try f.register("A", owner: ":1.1"), try f.register("B", owner: ":1.2"))
    }

    func activeIncoming(_ provider: Provider, _ uuid: UUID, _ update: CallUpdate = CallUpdate()) throws {
        try incoming(provider, uuid, update)
        try request(.answer(uuid))
        for action in board.allPendingActions where action.kind != .answer {
            try board.fulfillAction(provider: action.provider, action: action.id, at: 0)
        }
        try fulfil("answer", uuid)
    }
}

/// `#expect(throws:)` for a specific TelephonyError.
func expectError(_ expected: TelephonyError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected.name) but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as TelephonyError {
        #expect(error == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

/// Checks only the error's name (for errors with generated messages) and returns it.
@discardableResult
func expectErrorNamed(_ name: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> TelephonyError? {
    do {
        try body()
        Issue.record("expected \(name) but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as TelephonyError {
        #expect(error.name == name, "\(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
