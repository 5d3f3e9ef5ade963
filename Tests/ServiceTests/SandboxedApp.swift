import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// A Python app inside a real bubblewrap sandbox (a tmpfs root, a bound `/.flatpak-info`, only the
/// bus socket), as Flatpak runs one; with `throughProxy`, behind Flatpak's own `xdg-dbus-proxy`
/// (`--filter --talk=org.monkeycall.Telephony1`). The test drives it over the bus: its `Run` method
/// makes one call to the service from inside the sandbox and answers with the outcome in JSON;
/// `Heard` lists every signal it has received (it listens to all it can, as a curious app would).
final class SandboxedApp: @unchecked Sendable {
    let appID: String
    let process: ChildProcess
    /// The proxy between the app and the bus, with `throughProxy`.
    let proxy: ChildProcess?
    /// The well-known name the agent takes, to be driven by (one its app may own).
    let agentName: String
    private let driver: Connection

    static let agent = """
        import dbus, dbus.bus, dbus.service, dbus.mainloop.glib, json, os, sys
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()

        def plain(value):
            if isinstance(value, dict): return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)): return [plain(v) for v in value]
            if isinstance(value, dbus.Boolean): return bool(value)
            if isinstance(value, (int, float)): return value
            return str(value)

        # {"$o": "/path"} is an object path (JSON has none), at any depth.
        def typed(value):
            if isinstance(value, dict):
                if list(value.keys()) == ["$o"]: return dbus.ObjectPath(value["$o"])
                return {k: typed(v) for k, v in value.items()}
            if isinstance(value, list): return [typed(v) for v in value]
            return value

        heard = []
        def record(*args, **where):
            heard.append({"interface": where.get("interface") or "", "member": where.get("member") or "",
                          "path": where.get("path") or "", "args": plain(list(args))})
        bus.add_signal_receiver(record, interface_keyword="interface", member_keyword="member", path_keyword="path")

        class Agent(dbus.service.Object):
            @dbus.service.method("org.example.Agent", in_signature="", out_signature="s")
            def Heard(self):
                return json.dumps(heard)

            @dbus.service.method("org.example.Agent", in_signature="s", out_signature="s")
            def Run(self, request):
                r = json.loads(request)
                try:
                    method = bus.get_object(r["dest"], r["path"], introspect=False).get_dbus_method(r["member"], r["interface"])
                    result = method(*[typed(a) for a in r["args"]], signature=r["signature"])
                    return json.dumps({"result": plain(result)})
                except dbus.exceptions.DBusException as e:
                    return json.dumps({"error": e.get_dbus_name(), "message": e.get_dbus_message()})

            # Opens `count` more connections of its own, each calling Manager.Subscribe; they stay open.
            # The outcome of each: "ok" or the error's name.
            @dbus.service.method("org.example.Agent", in_signature="u", out_signature="s")
            def SubscribeMany(self, count):
                outcomes = []
                for _ in range(count):
                    link = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
                    try:
                        link.call_blocking("org.monkeycall.Telephony1", "/org/monkeycall/Telephony1", "org.monkeycall.Telephony1.Manager",
                                           "Subscribe", "", ())
                        links.append(link)
                        outcomes.append("ok")
                    except dbus.exceptions.DBusException as e:
                        link.close()
                        outcomes.append(e.get_dbus_name())
                return json.dumps(outcomes)

        links = []
        name = dbus.service.BusName(sys.argv[1], bus)
        Agent(bus, "/agent")
        print("ready", bus.get_unique_name(), flush=True)
        GLib.MainLoop().run()
        """

    /// What a call from inside the sandbox came to: a result, or an error's name and message.
    struct Outcome: CustomStringConvertible {
        let result: Any?
        let error: String?
        let message: String
        var description: String { error.map { "\($0): \(message)" } ?? "\(result ?? "nothing")" }
        var isAccessDenied: Bool { error == DBusError.Name.accessDenied }
    }

    init(appID: String, bus: PrivateBus, throughProxy: Bool = false) async throws {
        self.appID = appID
        agentName = "\(appID).Agent.A\(UUID().uuidString.prefix(8))"
        var socket: String?
        if throughProxy {
            let started = try await Sandbox.proxy(appID: appID, bus: bus, talk: [Telephony1.busName])
            (proxy, socket) = (started.process, started.socket)
        } else {
            proxy = nil
        }
        process = try Sandbox.flatpak(appID: appID, bus: bus, executable: "/usr/bin/python3", ["-c", Self.agent, agentName], socket: socket)
        driver = try Connection(address: bus.address)
        guard await process.waitForOutput(containing: "ready") else {
            throw TestSupportError("the sandboxed app did not start: \(process.output)")
        }
    }

    deinit {
        process.kill()
        proxy?.kill()
    }

    /// A signal the app heard.
    struct Heard: CustomStringConvertible {
        let interface: String, member: String, path: String, args: [Any]
        var description: String { "\(interface).\(member) at \(path): \(args)" }
        /// The whole signal as text, to search for what it must not tell.
        var text: String { "\(description)" }
    }

    /// Every signal the app has heard so far, in order.
    func heard() async throws -> [Heard] {
        let reply = try await driver.call(destination: agentName, path: "/agent", interface: "org.example.Agent", member: "Heard", timeout: .seconds(30))
        guard case .string(let json)? = reply.first,
              let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            throw TestSupportError("the agent answered \(reply)")
        }
        return list.map { Heard(interface: $0["interface"] as? String ?? "", member: $0["member"] as? String ?? "",
                                path: $0["path"] as? String ?? "", args: $0["args"] as? [Any] ?? []) }
    }

    /// Makes the call from inside the sandbox. `arguments`: JSON values in the order of `signature`.
    func call(_ path: ObjectPath, _ interface: String, _ member: String, signature: String = "", _ arguments: [Any] = []) async throws -> Outcome {
        let request: [String: Any] = ["dest": Telephony1.busName, "path": path.rawValue, "interface": interface, "member": member,
                                      "signature": signature, "args": arguments]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let reply = try await driver.call(destination: agentName, path: "/agent", interface: "org.example.Agent", member: "Run", [.string(text)],
                                          timeout: .seconds(30))
        guard case .string(let json)? = reply.first,
              let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw TestSupportError("the agent answered \(reply)")
        }
        return Outcome(result: object["result"], error: object["error"] as? String, message: object["message"] as? String ?? "")
    }

    /// Opens `count` more connections inside the sandbox, each subscribing; how many were refused with each error.
    func subscribeMany(_ count: Int) async throws -> [String: Int] {
        let reply = try await driver.call(destination: agentName, path: "/agent", interface: "org.example.Agent", member: "SubscribeMany",
                                          [.uint32(UInt32(count))], timeout: .seconds(60))
        guard case .string(let json)? = reply.first, let outcomes = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] else {
            throw TestSupportError("the agent answered \(reply)")
        }
        return outcomes.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    func root(_ interface: String, _ member: String, signature: String = "", _ arguments: [Any] = []) async throws -> Outcome {
        try await call(Telephony1.rootPath, interface, member, signature: signature, arguments)
    }

    func get(_ path: ObjectPath, _ interface: String, _ property: String) async throws -> Outcome {
        try await call(path, "org.freedesktop.DBus.Properties", "Get", signature: "ss", [interface, property])
    }

    /// Registers a provider from inside the sandbox; its path.
    func registerProvider(name: String, _ configuration: [String: Any] = [:]) async throws -> ObjectPath {
        var config = configuration
        config["Name"] = name
        let outcome = try await root(Telephony1.Manager.interface, "RegisterProvider", signature: "a{sv}", [config])
        guard let path = outcome.result as? String else { throw TestSupportError("RegisterProvider: \(outcome)") }
        return try ObjectPath(path)
    }

    /// Reports an incoming call on its provider at `provider`; the call's UUID.
    func reportIncoming(_ provider: ObjectPath, _ handle: String, update: [String: Any] = [:]) async throws -> String {
        let uuid = UUID().uuidString.lowercased()
        var fields = update
        fields["Handle"] = handle
        let outcome = try await call(provider, Telephony1.Provider.interface, "ReportNewIncomingCall", signature: "sa{sv}", [uuid, fields])
        guard outcome.error == nil else { throw TestSupportError("ReportNewIncomingCall: \(outcome)") }
        return uuid
    }
}

extension SandboxedApp {
    /// The call's `CallerName` as this app, its owner, reads it (Get and GetAll) is `appReads`, and
    /// as the host connection `user` reads it, `userReads`.
    func expectCallerName(of uuid: String, appReads: String, userReads: String, user: Connection,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let path = Telephony1.callPath(uuid)
        let got = try await get(path, Telephony1.Call.interface, "CallerName")
        #expect(got.result as? String == appReads, "Get: \(got)", sourceLocation: sourceLocation)
        let all = try await call(path, "org.freedesktop.DBus.Properties", "GetAll", signature: "s", [Telephony1.Call.interface])
        #expect((all.result as? [String: Any])?["CallerName"] as? String == appReads, "GetAll: \(all)", sourceLocation: sourceLocation)
        let userGot = try await user.call(destination: Telephony1.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                          member: "Get", [.string(Telephony1.Call.interface), .string("CallerName")])
        #expect(userGot == [.variant(.string(userReads))], "the user reads \(userGot)", sourceLocation: sourceLocation)
    }
}
