import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// What a sandboxed app learns of other apps, and what it may call at all (issue 39): errors name
/// only what it may see, its ringing card names it as the user knows it, and one table says what
/// it may call, everything else AccessDenied. Real bubblewrap sandboxes, the real daemon.
@Suite("Sandboxed apps: errors name nothing of others, the ring names the app, deny by default", .enabled(if: Sandbox.isAvailable, "bubblewrap is missing"))
struct SandboxBoundaryTests {
    /// `text` with every run of hex digits and every decimal number replaced, so that answers about
    /// different objects can be compared for what they say beyond the caller's own input.
    static func shape(_ text: String) -> String {
        text.replacingOccurrences(of: "[0-9a-fA-F-]{32,36}", with: "<uuid>", options: .regularExpression)
            .replacingOccurrences(of: "[0-9]+", with: "<n>", options: .regularExpression)
    }

    @Test("another app's provider and call read exactly as ones that do not exist: StartCall, AnswerCall, EndCall, SetGroup and its objects' paths, and no answer names the other app (found on main: \"may not start a call with provider Secret Clinic VoIP (2)\")")
    func providerNameOracle() async throws {
        let daemon = try await RunningDaemon()
        let secret = try await TestProvider(bus: daemon.bus, name: "Secret Clinic VoIP", configuration: [:])
        let secretCall = try await secret.reportIncoming("+15550199")
        let spy = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus)
        let own = try await spy.registerProvider(name: "Mallory")
        let ownCall = try await spy.reportIncoming(own, "+15550101")
        let controller = Telephony1.CallController.interface
        let missingProvider = "/org/monkeycall/Telephony1/Provider/9999"
        let missingCall = UUID().uuidString.lowercased()
        var answers: [String] = []

        // StartCall through another app's provider, and through none.
        for provider in [Telephony1.providerPath(1).rawValue, missingProvider] {
            let outcome = try await spy.root(controller, "StartCall", signature: "sa{sv}", ["+15550100", ["Provider": ["$o": provider]]])
            #expect(outcome.error == APIError.unentitled.rawValue, "\(outcome)")
            answers.append(outcome.message)
        }
        #expect(Set(answers.map(Self.shape)).count == 1, "\(answers)")
        // Call actions on another app's call, and on none.
        for member in ["AnswerCall", "EndCall"] {
            var pair: [String] = []
            for uuid in [secretCall.lowercased(), missingCall] {
                let outcome = try await spy.root(controller, member, signature: "s", [uuid])
                #expect(outcome.error == APIError.unentitled.rawValue, "\(member): \(outcome)")
                pair.append(outcome.message)
            }
            #expect(Set(pair.map(Self.shape)).count == 1, "\(member): \(pair)")
            answers += pair
        }
        // Grouping its own call with another app's, and with none.
        var grouping: [String] = []
        for uuid in [secretCall.lowercased(), missingCall] {
            let outcome = try await spy.root(controller, "SetGroup", signature: "ss", [ownCall, uuid])
            #expect(outcome.error != nil, "\(outcome)")
            grouping.append("\(outcome.error ?? "") \(outcome.message)")
        }
        #expect(Set(grouping.map(Self.shape)).count == 1, "\(grouping)")
        answers += grouping
        // The objects themselves: another app's provider and call, and paths where there is none.
        var paths: [String] = []
        for (path, interface, member) in [(Telephony1.providerPath(1), Telephony1.Provider.interface, "Invalidate"),
                                          (try ObjectPath(missingProvider), Telephony1.Provider.interface, "Invalidate"),
                                          (Telephony1.callPath(secretCall), Telephony1.Call.interface, "End"),
                                          (Telephony1.callPath(missingCall), Telephony1.Call.interface, "End")] {
            let outcome = try await spy.call(path, interface, member)
            #expect(outcome.isAccessDenied, "\(path): \(outcome)")
            paths.append(outcome.message)
        }
        #expect(Set(paths.map(Self.shape)).count == 2, "one shape for providers, one for calls: \(paths)")
        answers += paths
        for answer in answers {
            #expect(!answer.contains("Secret") && !answer.contains("Clinic"), "an answer names the other app: \(answer)")
        }
        print("provider-name oracle: \(answers.count) answers, none names the other app")
    }

    @Test("a sandboxed app that calls itself \"Your Bank\" rings as its app id, its chosen Name only beside it, on the card and its Open button (found on main: it rang as \"Your Bank\")")
    func impersonatingName() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let mallory = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus)
        let provider = try await mallory.registerProvider(name: "Your Bank")
        _ = try await mallory.reportIncoming(provider, "+15550123")
        let ringing = try #require(await server.notified.next())
        #expect(ringing.appName == "org.example.Mallory \u{201C}Your Bank\u{201D}", "\(ringing.appName)")
        #expect(ringing.appName.hasPrefix("org.example.Mallory"))
        let labels = stride(from: 1, to: ringing.actions.count, by: 2).map { ringing.actions[$0] }
        #expect(!labels.contains("Open Your Bank"), "\(labels)")
    }

    @Test("deny by default: every member of every interface, from a sandboxed app, on the root, its own and another app's provider, call and directory update, and paths with no object: answered as the grant table says")
    func denyByDefaultWalk() async throws {
        // Its own call must ring for the whole walk, however slow the machine, and its Answer (which
        // the app never fulfils) must not time out and end it.
        let daemon = try await RunningDaemon(["--ring-timeout", "3600", "--action-timeout", "3600"])
        let other = try await TestProvider(bus: daemon.bus, name: "Other", configuration: [:])
        let otherCall = try await other.reportIncoming("+15550001")
        let app = try await SandboxedApp(appID: "org.example.Walker", bus: daemon.bus)
        let own = try await app.registerProvider(name: "Walker")
        let ownCall = try await app.reportIncoming(own, "+15550002")
        let ownUpdate = try await app.call(own, Telephony1.Provider.interface, "BeginCallDirectoryUpdate", signature: "b", [false])
        #expect(ownUpdate.error == nil, "\(ownUpdate)")

        // Where, and what the table allows there (interface → methods; property reads by interface, nil: all).
        let manager = Telephony1.Manager.self
        let places: [(String, ObjectPath, [String: Set<String>], [String: Set<String>?])] = [
            ("root", Telephony1.rootPath,
             [manager.interface: [manager.registerProvider.name, manager.openURL.name, manager.subscribe.name, manager.unsubscribe.name],
              Telephony1.CallController.interface: Set(Self.methods(Telephony1.CallController.spec))],
             [manager.interface: [manager.version.name]]),
            ("own provider", own, [Telephony1.Provider.interface: Set(Self.methods(Telephony1.Provider.spec))], [Telephony1.Provider.interface: nil]),
            ("own update", Telephony1.directoryUpdatePath(own), [Telephony1.CallDirectoryUpdate.interface: Set(Self.methods(Telephony1.CallDirectoryUpdate.spec))], [:]),
            ("own call", Telephony1.callPath(ownCall), [Telephony1.Call.interface: Set(Self.methods(Telephony1.Call.spec))], [Telephony1.Call.interface: nil]),
            ("another app's provider", Telephony1.providerPath(1), [:], [:]),
            ("another app's call", Telephony1.callPath(otherCall), [:], [:]),
            ("another app's update", Telephony1.directoryUpdatePath(Telephony1.providerPath(1)), [:], [:]),
            ("no provider", try ObjectPath("/org/monkeycall/Telephony1/Provider/777"), [:], [:]),
            ("no call", Telephony1.callPath(UUID().uuidString), [:], [:]),
            ("elsewhere", try ObjectPath("/org/monkeycall/Telephony1/Search"), [:], [:]),
        ]
        var checked = 0
        var mismatches: [String] = []
        // What ends its own objects goes last, one place at a time: the rest of the walk needs them.
        let ending: Set = ["Invalidate", "End", "Complete", "Cancel", "ReportCallEnded"]
        for pass in [false, true] {
        // The ending pass ends its update, then its call, then its provider (which takes the others with it).
        let order = pass ? places.sorted { ["own update", "own call"].firstIndex(of: $0.0) ?? 2 < ["own update", "own call"].firstIndex(of: $1.0) ?? 2 } : places
        for (place, path, methods, reads) in order {
            for spec in Telephony1.interfaces {
                // Complete and Cancel each end the update: Cancel is tried, Complete answers the same way.
                for member in spec.members where ending.contains(member.name) == pass && !(place == "own update" && member.name == "Complete") {
                    let outcome: SandboxedApp.Outcome
                    let allowed: Bool
                    switch member.kind {
                    case .method:
                        // Arguments of the right types: what comes back past the gate is the method's own answer.
                        let signature = member.inputs.map(\.signature.rawValue).joined()
                        outcome = try await app.call(path, spec.name, member.name, signature: signature, member.inputs.map { Self.sample($0.signature.rawValue) })
                        allowed = methods[spec.name]?.contains(member.name) == true
                    case .property:
                        outcome = try await app.get(path, spec.name, member.name)
                        allowed = reads[spec.name].map { $0?.contains(member.name) ?? true } ?? false
                    case .signal:
                        continue
                    }
                    checked += 1
                    if outcome.isAccessDenied == allowed {
                        mismatches.append("\(place) \(spec.name).\(member.name): \(allowed ? "allowed but" : "refused but") \(outcome)")
                    }
                    if outcome.isAccessDenied, !outcome.message.contains("org.example.Walker is a sandboxed app and may not") {
                        mismatches.append("\(place) \(spec.name).\(member.name): refusal does not say why: \(outcome)")
                    }
                    if !allowed, ["another app's provider", "another app's call", "another app's update"].contains(place), outcome.message.contains("Other") {
                        mismatches.append("\(place) \(spec.name).\(member.name) names the other app: \(outcome)")
                    }
                }
            }
        }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked):\n\(mismatches.joined(separator: "\n"))")
        print("deny-by-default walk: \(checked) calls from a sandboxed app, \(mismatches.count) against the table")
    }

    static func methods(_ spec: InterfaceSpec) -> [String] { spec.members.filter { $0.kind == .method }.map(\.name) }

    /// A JSON value of the D-Bus type `signature` for the agent (dbus-python converts it).
    static func sample(_ signature: String) -> Any {
        switch signature.first {
        case "s", "o": signature == "o" ? "/org/monkeycall/Telephony1" : "x"
        case "b": false
        case "a":
            if signature.hasPrefix("a{") { [String: Any]() } else { [Any]() }
        case "(": [Any]()
        default: 0
        }
    }
}
