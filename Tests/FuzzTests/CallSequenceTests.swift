import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The random-sequence model test: see `CallModel`. Replay a failure with
/// `MONKEYCALL_FUZZ_SEED=<seed> scripts/test --filter CallSequenceTests`; run longer
/// with `MONKEYCALL_FUZZ_STEPS` (and more seeds, comma-separated).
@Suite("Random call sequences against the running monkeycalld")
struct CallSequenceTests {
    @Test("apps, user requests, disconnects and timeouts in a seeded random order keep every invariant", arguments: FuzzSettings.seeds)
    func randomSequence(seed: UInt64) async throws {
        let started = ContinuousClock.now
        let model = try await CallModel(seed: seed)
        let steps = FuzzSettings.modelSteps
        for step in 0..<steps {
            try await model.step(step)
            let problems = try await model.violations()
            guard problems.isEmpty else {
                let uuids = problems.joined().matches(of: /Call\/([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})/).map { "\($0.1)-\($0.2)-\($0.3)-\($0.4)" }
                Issue.record("\(model.context):\n\(problems.joined(separator: "\n"))\nthe steps on those calls:\n\(model.steps(mentioning: uuids))")
                return
            }
        }
        try await model.finish()
        let timeouts = model.apps.reduce(0) { $0 + $1.provider.signals.buffer.all.count { $0.member == "TimedOutPerformingAction" } }
        print("""
            fuzz model MONKEYCALL_FUZZ_SEED=\(seed): \(steps) steps in \(ContinuousClock.now - started), \(model.apps.count) apps, \
            \(Set(model.knownCalls).count) call UUIDs, \(model.requested.count + model.untrackedRequests) transactions each completed once, \
            \(timeouts) actions timed out, \(model.daemon.tally.total) calls to the daemon
            steps: \(model.operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            \(model.daemon.tally.summary)
            """)
    }
}

extension CallModel {
    static let liveStates: Set<String> = ["ringing", "dialing", "connecting", "active", "held"]

    /// What is wrong now, comparing one GetManagedObjects reply with the apps
    /// that are alive and with the signals heard before that reply.
    func violations() async throws -> [String] {
        var problems: [String] = []
        guard daemon.daemon.isRunning else { return ["monkeycalld exited: \(daemon.daemon.output)"] }
        let held = try await ManagedObjects.fetch(daemon.controller)
        let heard = mirror.state(before: held.serial)
        let heardCalls = heard.calls
        let providers = Set(held.providers.keys)

        // No provider of an app that left survives, and none is missing.
        let alive = Set(liveApps.map(\.provider.path))
        if providers != alive { problems.append("providers \(providers.sorted()) are listed, the apps alive are \(alive.sorted())") }
        if heard.providers != providers { problems.append("signals announced providers \(heard.providers.sorted()), GetManagedObjects lists \(providers.sorted())") }

        // Each call is listed by exactly its own provider's Calls.
        var listedBy: [ObjectPath: [ObjectPath]] = [:]
        for (provider, properties) in held.providers {
            guard case .array(_, let calls)? = properties["Calls"] else { problems.append("provider \(provider) has no Calls"); continue }
            for case .objectPath(let call) in calls { listedBy[call, default: []].append(provider) }
        }
        for (call, by) in listedBy where held.calls[call] == nil { problems.append("\(by) list \(call) in Calls, but there is no such call object") }

        // Each call has one live state, and its flags agree with it.
        for (path, properties) in held.calls.sorted(by: { $0.key < $1.key }) {
            guard case .string(let state)? = properties["State"], Self.liveStates.contains(state) else {
                problems.append("call \(path) has State \(String(describing: properties["State"]))"); continue
            }
            let outgoing = properties["Outgoing"] == .bool(true)
            if properties["HasEnded"] != .bool(false) { problems.append("call \(path) is \(state) with HasEnded \(String(describing: properties["HasEnded"]))") }
            if properties["OnHold"] != .bool(state == "held") { problems.append("call \(path) is \(state) with OnHold \(String(describing: properties["OnHold"]))") }
            if (state == "active" || state == "held") && properties["HasConnected"] != .bool(true) { problems.append("call \(path) is \(state) but has not connected") }
            if outgoing ? state == "ringing" : ["dialing", "connecting"].contains(state) { problems.append("\(outgoing ? "outgoing" : "incoming") call \(path) is \(state)") }
            if case .string(let uuid)? = properties["UUID"], Telephony1.callPath(uuid) == path {} else { problems.append("call \(path) has UUID \(String(describing: properties["UUID"]))") }
            guard case .objectPath(let provider)? = properties["Provider"] else { problems.append("call \(path) has no Provider"); continue }
            if !providers.contains(provider) { problems.append("call \(path) survives its provider \(provider)") }
            if listedBy[path] != [provider] { problems.append("call \(path) of \(provider) is listed in the Calls of \(listedBy[path] ?? [])") }
            if heardCalls[path]?["State"] != properties["State"] {
                problems.append("call \(path) is \(state), but the signals said \(String(describing: heardCalls[path]?["State"])) (heard: \(heard.heard[path, default: []].joined(separator: ", ")))")
            }
        }
        let unheard = Set(held.calls.keys).symmetricDifference(heardCalls.keys)
        if !unheard.isEmpty { problems.append("signals and GetManagedObjects disagree about calls \(unheard.sorted())") }

        // A transaction completes at most once.
        for (transaction, count) in completions.byTransaction where count > 1 { problems.append("transaction \(transaction) completed \(count) times") }
        return problems
    }

    /// The end of a run: the apps stop answering, so every ringing call times
    /// out; then they leave, and every transaction must have completed exactly once.
    func finish() async throws {
        step += 1
        operation = "the apps stop answering"
        let ringing = Self.ringTimeout + 2 * Self.actionTimeout + 10
        let quiet = await mirror.waitUntil(timeout: .seconds(ringing)) { mirror in !mirror.calls.values.contains { $0["State"] == .string("ringing") } }
        #expect(quiet, "\(context): calls still ring \(ringing) s later: \(mirror.calls.filter { $0.value["State"] == .string("ringing") }.keys.sorted())")

        operation = "every app leaves"
        for app in liveApps { try await leave(app) }
        let problems = try await violations()
        #expect(problems.isEmpty, "\(context): \(problems.joined(separator: "\n"))")
        let left = try await ManagedObjects.fetch(daemon.controller)
        #expect(left.calls.isEmpty && left.providers.isEmpty, "\(context): objects left after every app left: \(left.calls.keys.sorted()) \(left.providers.keys.sorted())")

        operation = "every transaction completes"
        let requested = self.requested, untracked = untrackedRequests
        func settled(_ counts: [String: Int]) -> Bool {
            requested.isSubset(of: counts.keys) && counts.keys.count { !requested.contains($0) } >= untracked
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !settled(completions.byTransaction), deadline > .now {
            _ = await completions.heard.next(timeout: deadline - .now)
        }
        let counts = completions.byTransaction
        let missing = requested.subtracting(counts.keys)
        #expect(missing.isEmpty, "\(context): \(missing.count) of \(requested.count) transactions never completed: \(missing.sorted().prefix(10))")
        let others = counts.keys.count { !requested.contains($0) }
        #expect(others == untracked, "\(context): \(others) completions of transactions through Call objects, \(untracked) requested")
        let repeated = counts.filter { $0.value != 1 }
        #expect(repeated.isEmpty, "\(context): transactions completed more than once: \(repeated)")

        operation = "monkeycalld stops"
        try await daemon.expectAlive(context)
        daemon.daemon.terminate()
        #expect(await daemon.daemon.waitForExit() == 0, "\(context): \(daemon.daemon.output)")
    }
}
