import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// `examples/python-provider.py` as a Flatpak runs it: in a bubblewrap sandbox with a
/// `/.flatpak-info`, its only bus the socket of Flatpak's own `xdg-dbus-proxy --filter`, allowed
/// what `examples/flatpak`'s manifest fragment grants (`--talk-name=org.monkeycall.Telephony1`). It goes
/// through a whole call; another process of the same app observes it once it has called
/// `Manager.Subscribe`, and one that has not hears nothing.
@Suite("The Python example as a Flatpak, behind xdg-dbus-proxy", .enabled(if: Sandbox.isProxyAvailable, "xdg-dbus-proxy or bwrap is missing"))
struct FlatpakExampleTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples")
    static let appID = "org.example.PyPhone"

    @Test("registers as its app id, rings, is answered and ended by the user, exits 0; a subscribed observer of the app sees the call, an unsubscribed one nothing; Recents is refused")
    func wholeCallBehindTheProxy() async throws {
        let daemon = try await RunningDaemon()
        let observer = try await SandboxedApp(appID: Self.appID, bus: daemon.bus, throughProxy: true)
        let unsubscribed = try await SandboxedApp(appID: Self.appID, bus: daemon.bus, throughProxy: true)
        let subscribed = try await observer.root(Telephony1.Manager.interface, Telephony1.Manager.subscribe.name)
        #expect(subscribed.error == nil, "\(subscribed)")

        // The proxy grants what examples/flatpak's manifest fragment grants, and nothing more.
        let fragment = try String(contentsOf: Self.examples.appendingPathComponent("flatpak/monkeycall-finish-args.yml"), encoding: .utf8)
        let talk = fragment.split(separator: "\n").filter { $0.hasPrefix("  - --talk-name=") }.map { String($0.dropFirst("  - --talk-name=".count)) }
        #expect(talk == [Telephony1.busName], "\(fragment)")
        let proxy = try await Sandbox.proxy(appID: Self.appID, bus: daemon.bus, talk: talk)
        defer { proxy.process.kill() }
        let script = Self.examples.appendingPathComponent("python-provider.py").path
        let app = try Sandbox.flatpak(appID: Self.appID, bus: daemon.bus, executable: "/usr/bin/python3",
                                      [script, "--incoming", "bob", "--one-call"], readOnly: [Self.examples.path], socket: proxy.socket)
        defer { app.kill() }
        #expect(await app.waitForOutput(containing: "began"), "\(app.output)")
        #expect(await app.waitForOutput(containing: " from bob"), "\(app.output)")
        let uuid = try #require(app.standardOutput.firstMatch(of: /ringing ([0-9a-f-]{36}) from bob/)?.1).description
        let provider = try #require(app.standardOutput.firstMatch(of: /registered as PyPhone at (\S+)/)?.1).description
        // The service knows it by its app id, not by the Name it chose.
        let user = try Connection(address: daemon.bus.address)
        #expect(try await user.get(Telephony1.Provider.appId, destination: Telephony1.busName, path: ObjectPath(provider)) == Self.appID)

        #expect(try await daemon.cli("answer", uuid).status == 0)
        #expect(await app.waitForOutput(containing: "action answer \(uuid)"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "state \(uuid) active"), "\(app.output)")
        #expect(try await daemon.cli("end", uuid).status == 0)
        #expect(await app.waitForOutput(containing: "action end \(uuid)"), "\(app.output)")
        #expect(await app.waitForOutput(containing: "state \(uuid) ended"), "\(app.output)")
        #expect(await app.waitForExit() == 0, "\(app.output)")

        // The app's observer, subscribed, followed the call to its end.
        let path = Telephony1.callPath(uuid).rawValue
        var heard: [SandboxedApp.Heard] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            heard = try await observer.heard().filter { $0.path == path && $0.member == "PropertiesChanged" }
            if heard.contains(where: { $0.text.contains("ended") }) { break }
            try await Task.sleep(for: .milliseconds(50))  // a poll of the observer's record, bounded by the deadline
        }
        #expect(heard.contains { $0.text.contains("active") } && heard.contains { $0.text.contains("ended") }, "\(heard)")
        let unheard = try await unsubscribed.heard().filter { $0.text.contains(path) || $0.text.contains(uuid) }
        #expect(unheard.isEmpty, "an app that did not subscribe heard: \(unheard)")

        // What the sandbox may not do: the user's Recents.
        let recents = try await observer.root(Telephony1.Recents.interface, "List", signature: "uu", [10, 0])
        #expect(recents.isAccessDenied && recents.message.contains(Self.appID), "\(recents)")
    }
}
