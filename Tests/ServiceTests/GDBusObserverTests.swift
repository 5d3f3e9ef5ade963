import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A host GDBus app follows the calls with GLib's own `GDBusObjectManagerClient`, not ours: one
/// `Manager.Subscribe()` call, and the unicast signals the service sends are enough for it.
@Suite("A host GDBus app's GDBusObjectManagerClient")
struct GDBusObserverTests {
    /// Python and gi: the object manager client, then Subscribe; prints each change on a line.
    static let observer = """
        import sys
        from gi.repository import Gio, GLib
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
        manager = Gio.DBusObjectManagerClient.new_sync(bus, Gio.DBusObjectManagerClientFlags.NONE, "org.monkeycall.Telephony1",
                                                       "/org/monkeycall/Telephony1", None, None, None)
        bus.call_sync("org.monkeycall.Telephony1", "/org/monkeycall/Telephony1", "org.monkeycall.Telephony1.Manager", "Subscribe",
                      None, None, Gio.DBusCallFlags.NONE, -1, None)
        def changed(manager, obj, proxy, changed, invalidated):
            values = changed.unpack()
            if "State" in values: print("state", obj.get_object_path(), values["State"], flush=True)
        manager.connect("object-added", lambda m, obj: print("added", obj.get_object_path(), flush=True))
        manager.connect("object-removed", lambda m, obj: print("removed", obj.get_object_path(), flush=True))
        manager.connect("interface-proxy-properties-changed", changed)
        print("ready", len(manager.get_objects()), flush=True)
        GLib.MainLoop().run()
        """

    @Test("after one Subscribe() it follows a call from added through active to removed")
    func followsCalls() async throws {
        let daemon = try await RunningDaemon()
        let observer = try ChildProcess("/usr/bin/python3", ["-c", Self.observer, daemon.bus.address], environment: daemon.bus.environment)
        defer { observer.kill() }
        #expect(await observer.waitForOutput(containing: "ready"), "\(observer.output)")
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        let uuid = try await app.reportIncoming("alice")
        let path = Telephony1.callPath(uuid).rawValue
        #expect(await observer.waitForOutput(containing: "added \(path)"), "\(observer.output)")
        let user = try Connection(address: daemon.bus.address)
        try await user.call(destination: Telephony1.busName, path: Telephony1.rootPath, interface: Telephony1.CallController.interface,
                            member: "AnswerCall", [.string(uuid)])
        try await app.perform("answer")
        #expect(await observer.waitForOutput(containing: "state \(path) active"), "\(observer.output)")
        try await app.call("ReportCallEnded", [.string(uuid), .string("remote-ended"), .uint64(0)])
        #expect(await observer.waitForOutput(containing: "removed \(path)"), "\(observer.output)")
    }
}
