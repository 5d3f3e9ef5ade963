import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A Flatpak app that may talk to the service (`--talk-name=org.monkeycall.Telephony1`, which every
/// adopting app needs) listens to everything it can, behind the real `xdg-dbus-proxy` run as
/// Flatpak runs it, while another app calls and the user changes settings. The proxy cannot filter
/// broadcasts by content; the service broadcasts nothing, so the app hears only of its own.
@Suite("Sandboxed apps hear nothing of other apps' calls or of the user's data", .enabled(if: Sandbox.isProxyAvailable, "xdg-dbus-proxy or bwrap is missing"))
struct SignalPrivacyTests {
    @Test("behind xdg-dbus-proxy, subscribed and listening to every signal: another app's call, the user's settings, block list and Recents are never heard; its own call is; introspection shows only its own (found on main: all broadcast)")
    func nothingOfOthers() async throws {
        let daemon = try await RunningDaemon()
        let spy = try await SandboxedApp(appID: "org.example.Mallory", bus: daemon.bus, throughProxy: true)
        let subscribed = try await spy.root(Telephony1.Manager.interface, Telephony1.Manager.subscribe.name)
        #expect(subscribed.error == nil, "\(subscribed)")
        let own = try await spy.registerProvider(name: "Mallory")
        let ownCall = try await spy.reportIncoming(own, "mallory-friend")

        // The user's side, subscribed too: it hears everything.
        let user = try Connection(address: daemon.bus.address)
        let userHeard = try await SignalRecorder(user, MatchRule(sender: Telephony1.busName))
        try await user.subscribeToTelephony()

        // Another app's call with a caller name, the user's settings and block list, a Recents entry.
        let other = try await TestProvider(bus: daemon.bus, name: "Othello", configuration: [:])
        let secret = try await other.reportIncoming("+15550001", update: ["LocalizedCallerName": .string("Secret Caller")])
        let otherLive = try await other.reportIncoming("+15550002")
        try await user.set(Telephony1.Manager.doNotDisturb, destination: Telephony1.busName, path: Telephony1.rootPath, true)
        try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallDirectory.interface,
                            member: "BlockHandle", [.string("+44*")])
        try await other.call("ReportCallEnded", [.string(secret), .string("remote-ended"), .uint64(0)])

        // Last, a change to its own call: once the app hears it, it has heard all the service sent it before.
        let marked = try await spy.call(own, Telephony1.Provider.interface, "ReportCallUpdated", signature: "sa{sv}", [ownCall, ["LocalizedCallerName": "Marker"]])
        #expect(marked.error == nil, "\(marked)")
        var heard: [SandboxedApp.Heard] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            heard = try await spy.heard()
            if heard.contains(where: { $0.text.contains("Marker") }) { break }
            try await Task.sleep(for: .milliseconds(50))  // a poll of the app's record, bounded by the deadline
        }
        #expect(heard.contains { $0.text.contains("Marker") }, "the app never heard its own call change: \(heard)")
        let ownPath = Telephony1.callPath(ownCall).rawValue, secretPath = Telephony1.callPath(secret).rawValue
        #expect(heard.contains { $0.member == "InterfacesAdded" && $0.text.contains(ownPath) }, "\(heard)")
        for leak in ["Secret Caller", "+15550001", secretPath, "Othello", "DoNotDisturb", "BlockedHandles", "+44", "MissedCount"] {
            #expect(!heard.contains { $0.text.contains(leak) }, "the sandboxed app heard \(leak): \(heard.filter { $0.text.contains(leak) })")
        }
        #expect(!heard.contains { $0.member == Telephony1.Recents.entryAdded.name }, "the sandboxed app heard a Recents entry")

        // The user heard all of it.
        #expect(await userHeard.next(where: { ($0.first?.description ?? "").contains(secretPath) }) != nil, "the user did not hear the other app's call")
        #expect(await userHeard.next("EntryAdded") != nil)

        // Introspection of /Call lists its own call, never another app's.
        let introspected = try await spy.call(Telephony1.callRoot, "org.freedesktop.DBus.Introspectable", "Introspect")
        let xml = introspected.result as? String ?? ""
        let ownHex = String(ownPath.split(separator: "/").last ?? "")
        let again = try await spy.call(Telephony1.callRoot, "org.freedesktop.DBus.Introspectable", "Introspect")
        let xmlAgain = again.result as? String ?? ""
        #expect(xml.contains(ownHex), "\(xml)")
        #expect(!xmlAgain.contains(String(Telephony1.callPath(otherLive).rawValue.split(separator: "/").last ?? "")), "\(xmlAgain)")
        #expect(xmlAgain.contains(ownHex), "\(xmlAgain)")
    }
}
