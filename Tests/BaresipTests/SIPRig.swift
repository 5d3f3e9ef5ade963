import BaresipBridge
import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Whether baresip is here; CI installs it (scripts/deps), so the SIP tests run there.
enum Baresip {
    static let path = BaresipProcess.locate()
    static let skipMessage: Comment = "baresip is not installed (scripts/deps installs baresip-core): the real SIP tests are skipped"
}

/// A baresip on loopback for a test: its own SIP port (and the TLS port after it),
/// its own control port, headless audio, an account without a registrar.
final class TestBaresip: @unchecked Sendable {
    let user: String
    let sipPort: UInt16
    let control: ControlAddress
    let directory: URL
    private(set) var process: ChildProcess

    init(user: String, displayName: String) throws {
        self.user = user
        sipPort = try Ports.block()
        control = ControlAddress(host: "127.0.0.1", port: sipPort + 2)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-baresip-\(user)-\(UUID().uuidString.prefix(8))")
        var configuration = BaresipConfiguration(
            account: try SIPAccount("\"\(displayName)\" <sip:\(user)@127.0.0.1:\(sipPort)>;regint=0;audio_codecs=PCMU"),
            password: nil, control: control)
        configuration.sipListen = "127.0.0.1:\(sipPort)"
        configuration.netInterface = "127.0.0.1"
        configuration.headlessAudio = true
        try configuration.write(to: directory)
        process = try Self.spawn(directory)
    }

    private static func spawn(_ directory: URL) throws -> ChildProcess {
        try ChildProcess(Baresip.path!, ["-f", directory.path])
    }

    var uri: String { "sip:\(user)@127.0.0.1:\(sipPort)" }

    deinit {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Ports for one baresip: SIP, SIP/TLS (baresip takes the next port), and ctrl_tcp, three in a row,
/// handed out below the kernel's ephemeral range (32768 on) so that no connection's port takes them;
/// each checked free by binding it. The checking socket is close-on-exec: a child another test
/// started in that moment inherited it once and held the port bound for its whole life, and the
/// baresip given it then failed with "Address already in use". `next` is touched only under `lock`.
enum Ports {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var next = UInt16(20_000 + (getpid() % 1_000) * 12)

    /// The SIP port; the control port is the one after the TLS port (`sipPort + 2`).
    static func block() throws -> UInt16 {
        try lock.withLock {
            for _ in 0..<500 {
                let port = next
                next = next >= 32_000 ? 20_000 : next + 3
                if (0..<3).allSatisfy({ isFree(port + $0) }) { return port }
            }
            throw TestSupportError("no three free loopback ports in a row for baresip")
        }
    }

    private static func isFree(_ port: UInt16) -> Bool {
        [SOCK_STREAM, SOCK_DGRAM].allSatisfy { type in
            let fd = socket(AF_INET, Int32(type.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
    }
}

/// The other side of the calls: a baresip driven over its own ctrl_tcp.
final class RemoteParty: @unchecked Sendable {
    let baresip: TestBaresip
    let events = EventBuffer<ControlEvent>()
    private let connections = EventBuffer<Bool>()
    private let client: ControlClient

    init(user: String = "bob", displayName: String = "Bob") async throws {
        baresip = try TestBaresip(user: user, displayName: displayName)
        client = ControlClient(address: baresip.control, queue: DispatchQueue(label: "remote-party"), backoff: (0.02, 0.2))
        client.onMessage = { [events] message in
            if case .event(let event) = message { events.append(event) }
        }
        client.onConnected = { [connections] in connections.append(true) }
        client.start()
        guard await connections.next(timeout: .seconds(10)) != nil else {
            throw TestSupportError("the remote baresip's ctrl_tcp did not answer: \(baresip.process.output)")
        }
    }

    deinit { client.stop() }

    var uri: String { baresip.uri }

    /// Sends commands in one write (the remote's current call is the one they act on).
    func send(_ commands: ControlCommand...) {
        #expect(client.send(commands), "the remote's control connection is down")
    }

    /// The next event of `type` (after those already taken), or nil after the deadline.
    func next(_ type: String, timeout: Duration = .seconds(10), where predicate: @escaping (ControlEvent) -> Bool = { _ in true }) async -> ControlEvent? {
        await events.next(timeout: timeout) { $0.type == type && predicate($0) }
    }
}

/// A whole SIP setup on a private bus: monkeycalld, a notification server, the bridged
/// baresip (alice), monkeycall-baresip attached to it, and the remote party (bob).
final class SIPRig: @unchecked Sendable {
    let bus: PrivateBus
    let notifications: NotificationServer
    private(set) var daemon: ChildProcess
    let local: TestBaresip
    let remote: RemoteParty
    private(set) var bridge: ChildProcess?
    private let watcher: Connection
    private let added: SignalRecorder
    private let changes: SignalRecorder
    private let recents: SignalRecorder

    init(startBridge: Bool = true) async throws {
        bus = try await PrivateBus.start()
        notifications = try await NotificationServer(address: bus.address)
        watcher = try Connection(address: bus.address)
        added = try await SignalRecorder(watcher, MatchRule(path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        changes = try await SignalRecorder(watcher, MatchRule(pathNamespace: Telephony1.callRoot, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        recents = try await SignalRecorder(watcher, MatchRule(path: Telephony1.rootPath, interface: Telephony1.Recents.interface, member: Telephony1.Recents.entryAdded.name))
        daemon = try await Self.startDaemon(bus)
        try await watcher.subscribeToTelephony()
        local = try TestBaresip(user: "alice", displayName: "Alice")
        remote = try await RemoteParty()
        if startBridge { try await self.startBridge() }
    }

    deinit {
        bridge?.kill()
        daemon.kill()
        bus.stop()
    }

    private static func startDaemon(_ bus: PrivateBus) async throws -> ChildProcess {
        try await bus.startMonkeycalld()
    }

    /// Kills monkeycalld and starts a new one on the same bus.
    func restartDaemon() async throws {
        daemon.kill()
        _ = await daemon.waitForExit()
        daemon = try await Self.startDaemon(bus)
        try await watcher.subscribeToTelephony()
    }

    /// Starts monkeycall-baresip on the local baresip and waits until it is registered and synchronised.
    func startBridge() async throws {
        let bridge = try ChildProcess(BuiltProducts.path("monkeycall-baresip"),
                                      ["--control", local.control.description, "--account", "\"Alice\" <\(local.uri)>", "--reconnect-grace", "0.3"], environment: bus.environment)
        self.bridge = bridge
        guard await bridge.waitForOutput(containing: "monkeycall-baresip is ready."),
              await bridge.waitForOutput(containing: "Connected to baresip") else {
            throw TestSupportError("monkeycall-baresip did not start: \(bridge.output)\nits baresip: \(local.process.output)")
        }
    }

    /// Runs the monkeycall CLI on the rig's bus.
    func cli(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await bus.monkeycall(arguments)
    }

    /// Runs the CLI and expects it to succeed; returns its output.
    @discardableResult
    func ok(_ arguments: String...) async throws -> String {
        let result = try await bus.monkeycall(arguments)
        #expect(result.status == 0, "monkeycall \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The UUID and properties of the next call the service publishes.
    func nextCall(timeout: Duration = .seconds(10)) async -> (uuid: String, properties: [String: DBusValue])? {
        let callPrefix = Telephony1.callRoot.rawValue + "/"
        let message = await added.next(timeout: timeout) { arguments in
            if case .objectPath(let path)? = arguments.first { path.rawValue.hasPrefix(callPrefix) } else { false }
        }
        guard let message, let arguments = try? message.arguments(), case .objectPath(let path)? = arguments.first,
              case .dictionary(_, _, let interfaces)? = arguments.dropFirst().first,
              let properties = interfaces.first(where: { $0.key == .string(Telephony1.Call.interface) })?.value.vardict else { return nil }
        let hex = Array(path.rawValue.split(separator: "/").last ?? "")
        guard hex.count == 32 else { return nil }
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }
        return (parts.joined(separator: "-"), properties)
    }

    /// A call the service already has (from `GetManagedObjects`), as `nextCall` gives one.
    func existingCall() async -> (uuid: String, properties: [String: DBusValue])? {
        guard let reply = try? await watcher.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                  interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"),
              case .dictionary(_, _, let objects)? = reply.first else { return nil }
        for object in objects {
            guard case .objectPath(let path) = object.key, path.isDescendant(of: Telephony1.callRoot),
                  case .dictionary(_, _, let interfaces) = object.value,
                  let properties = interfaces.first(where: { $0.key == .string(Telephony1.Call.interface) })?.value.vardict,
                  case .string(let uuid)? = properties["UUID"]?.unwrappedVariant else { continue }
            return (uuid, properties.mapValues { $0.unwrappedVariant })
        }
        return nil
    }

    /// Waits until the service announces that the call's property `name` became `value`.
    func waitFor(_ uuid: String, _ name: String, _ value: DBusValue, timeout: Duration = .seconds(10)) async -> Bool {
        guard UUID(uuidString: uuid) != nil else { return false }
        let path = Telephony1.callPath(uuid)
        // Already so: a wait for another call may have passed over this one's change.
        if let current = try? await watcher.call(destination: Telephony1.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                                 member: "Get", [.string(Telephony1.Call.interface), .string(name)]),
           current.first?.unwrappedVariant == value {
            return true
        }
        return await changes.buffer.next(timeout: timeout) { message in
            message.path == path && ((try? message.arguments())?.dropFirst().first?.vardict?[name]) == value
        } != nil
    }

    func waitFor(_ uuid: String, state: String, timeout: Duration = .seconds(10)) async -> Bool {
        await waitFor(uuid, "State", .string(state), timeout: timeout)
    }

    /// Expects the call to end, and requires the Recents entry it leaves.
    func endedEntry(_ uuid: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: DBusValue] {
        #expect(await waitFor(uuid, state: "ended"), sourceLocation: sourceLocation)
        return try #require(await recentsEntry(uuid), sourceLocation: sourceLocation)
    }

    /// After a restart of the bridge or the service: expects the call still up in baresip to be
    /// reported again, connected, and to end on the remote with `monkeycall end`; returns its UUID.
    @discardableResult
    func hangUpCallReportedAgain(sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        // Reported before the watcher subscribed again (the service had just started), or after.
        var found = await existingCall()
        if found == nil { found = await nextCall() }
        let again = try #require(found, "\(bridge?.output ?? "")", sourceLocation: sourceLocation)
        #expect(again.properties["Handle"] == .string(remote.uri), sourceLocation: sourceLocation)
        #expect(await waitFor(again.uuid, state: "active"), "\(bridge?.output ?? "")", sourceLocation: sourceLocation)
        try await ok("end", again.uuid)
        #expect(await remote.next("CALL_CLOSED") != nil, sourceLocation: sourceLocation)
        return again.uuid
    }

    /// The Recents entry written when the call ended.
    func recentsEntry(_ uuid: String, timeout: Duration = .seconds(10)) async -> [String: DBusValue]? {
        let message = await recents.next(timeout: timeout) { arguments in
            arguments.first?.vardict?[Telephony1.Key.callUUID] == .string(uuid.lowercased())
        }
        guard let message else { return nil }
        return (try? message.arguments())?.first?.vardict
    }

    /// The next notification with this category.
    func notification(_ category: String, timeout: Duration = .seconds(10)) async -> NotificationServer.Notification? {
        await notifications.notified.next(timeout: timeout) { $0.hints["category"] == .string(category) }
    }

    /// The remote calls the bridged baresip; returns the call as MonkeyCall published it.
    func incomingCall() async throws -> String {
        remote.send(.dial(local.uri))
        let call = try #require(await nextCall(), "no call was published: \(bridge?.output ?? "")")
        #expect(call.properties["State"] == .string("ringing"))
        return call.uuid
    }

    /// An incoming call, answered from the CLI and established on both sides.
    func answeredCall() async throws -> String {
        let uuid = try await incomingCall()
        try await ok("answer", uuid)
        #expect(await remote.next("CALL_ESTABLISHED") != nil, "the remote did not see the call established")
        #expect(await waitFor(uuid, state: "active"), "\(bridge?.output ?? "")")
        return uuid
    }
}
