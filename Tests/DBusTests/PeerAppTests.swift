import DBus
@testable import PeerIdentity
import DBusTestSupport
import Foundation
import Testing

/// Who is behind a connection: found from the bus's credentials and the process's sandbox marks,
/// with real programs inside a real bubblewrap sandbox.
@Suite("The app behind a connection")
struct PeerAppTests {
    /// A Python program that takes a bus name and stays until killed.
    static let holdName = """
        import dbus, sys, time
        bus = dbus.SessionBus()
        bus.request_name(sys.argv[1])
        print("ready", flush=True)
        while True: time.sleep(3600)
        """

    @Test("a program in a Flatpak-style sandbox is the app its /.flatpak-info names; a host program is a host app")
    func flatpakAndHost() async throws {
        let bus = try await PrivateBus.start()
        let connection = try Connection(address: bus.address)
        let sandboxed = try Sandbox.flatpak(appID: "org.example.PyPhone", bus: bus, executable: "/usr/bin/python3",
                                            ["-c", Self.holdName, "org.example.Probe"])
        #expect(await sandboxed.waitForOutput(containing: "ready"), "\(sandboxed.output)")
        #expect(try await connection.peerApp(of: "org.example.Probe") == .flatpak(id: "org.example.PyPhone"))
        #expect(try await connection.peerApp(of: "org.example.Probe").appID == "org.example.PyPhone")

        let host = try Connection(address: bus.address)
        #expect(try await connection.peerApp(of: host.uniqueName) == .host)
        #expect(try await connection.peerApp(of: host.uniqueName).appID == "")
    }

    @Test("a connection that has gone cannot be identified")
    func goneConnection() async throws {
        let bus = try await PrivateBus.start()
        let connection = try Connection(address: bus.address)
        await #expect(throws: DBusError.self) { try await connection.peerApp(of: ":1.999") }
    }

    @Test("credentials carry the process and the user")
    func credentials() async throws {
        let bus = try await PrivateBus.start()
        let connection = try Connection(address: bus.address)
        let credentials = try await connection.credentials(of: connection.uniqueName)
        #expect(credentials.processID == getpid())
        #expect(credentials.userID == getuid())
    }
}

@Suite("Sandbox marks")
struct SandboxMarkTests {
    @Test("the app id is name= of the [Application] group, and only a valid one")
    func flatpakInfo() {
        #expect(PeerApp.flatpakAppID(fromInfo: "[Application]\nname=org.example.App\nruntime=x\n") == "org.example.App")
        #expect(PeerApp.flatpakAppID(fromInfo: "[Instance]\nname=org.evil.Other\n[Application]\nname = com.example.Real \n") == "com.example.Real")
        #expect(PeerApp.flatpakAppID(fromInfo: "[Runtime]\nname=org.freedesktop.Platform\n") == nil)
        for bad in ["", "org.example", "org..example", "org.example.1app", "org.example.app\u{1B}", "org.ex ample.App",
                    String(repeating: "a.", count: 130) + "b"] {
            #expect(PeerApp.flatpakAppID(fromInfo: "[Application]\nname=\(bad)\n") == nil, "\(bad)")
        }
    }

    @Test("a Snap is the NAME of its AppArmor profile snap.NAME.APP")
    func snapLabel() {
        #expect(PeerApp.snapName(fromAppArmorLabel: "snap.telegram-desktop.telegram-desktop (enforce)") == "telegram-desktop")
        #expect(PeerApp.snapName(fromAppArmorLabel: "snap.zoom-client.zoom (complain)") == "zoom-client")
        #expect(PeerApp.snapName(fromAppArmorLabel: "unconfined") == nil)
        #expect(PeerApp.snapName(fromAppArmorLabel: "/usr/bin/evince (enforce)") == nil)
        #expect(PeerApp.snapName(fromAppArmorLabel: "snap..x") == nil)
        #expect(PeerApp.snap(name: "zoom-client").appID == "snap.zoom-client")
    }
}
