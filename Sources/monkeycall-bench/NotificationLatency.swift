import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Synchronization

/// From `ReportNewIncomingCall` leaving the provider to the `Notify` call
/// arriving at a notification server on the same bus: the path a ringing call
/// takes through the service, libnotify's thread and GDBus.
///
/// Each round starts with the daemon quiet (the last call's notification closed and its Recents
/// entry written) and times one `Peer.Ping` to the daemon, then the call: the ratio compares the
/// two from the same state, in the same minutes of the run (the machine's speed drifts over a run).
///
/// With `floor`, each round also reports a call to a no-op peer (`NotifyingPeer`) that answers the
/// report and calls `Notify` on the same server itself, with the daemon's notification: what the
/// path costs whoever serves it (two hops through dbus-daemon, the server's reply). The daemon's
/// call and the peer's alternate which goes first, round by round.
enum NotificationLatency {
    struct Result {
        let notify: Samples
        let ping: Samples
        /// The same calls to the no-op peer, in the same rounds (with `floor`).
        var floor: Samples? = nil
        var ratio: Double { notify.median / ping.median }
        var floorRatio: Double? { floor.map { notify.median / $0.median } }
    }

    /// `handle`: the caller of call `index`; `shown`: the first line of its notification's body
    /// (the caller's name, else the handle).
    static func measure(address: String, count: Int, floor: Bool = false, handle: @escaping (Int) -> String = { "caller\($0)" },
                        shown: ((Int) -> String)? = nil) async throws -> Result {
        let shown = shown ?? handle
        let server = try await NotificationServer(address: address)
        defer { server.stop() }
        let app = try Connection(address: address)
        defer { app.close() }
        let path = try await app.registerProvider("Latency")
        let entries = try await SignalRecorder(app, MatchRule(sender: Telephony1.busName, interface: Telephony1.Recents.interface,
                                                              member: Telephony1.Recents.entryAdded.name))
        defer { entries.cancel() }
        try await app.subscribeToTelephony()  // Recents entries go to subscribers only
        let peer = floor ? try NotifyingPeer(address: address) : nil
        defer { peer?.close() }

        /// One call to the peer, timed from the report to its Notify at the server, then ended (its notification closed).
        func floorCall(_ index: Int) async throws -> Double {
            guard let peer else { return 0 }
            let uuid = UUID().uuidString.lowercased()
            let expected = handle(index)
            let start = ContinuousClock.now
            _ = try await app.call(Telephony1.Provider.reportNewIncomingCall, destination: peer.uniqueName, path: NotifyingPeer.path,
                                   try UUID.bench(uuid), CallUpdate(handle: Handle(value: expected)))
            // Its summary too: the daemon's missed-call notification of the same caller may be there.
            let summary = peer.template?.summary
            guard let shown = await server.notified.next(timeout: .seconds(10), where: {
                $0.summary == summary && $0.body.split(separator: "\n").first == Substring(expected)
            }) else {
                throw BenchError("the no-op peer's Notify did not reach the notification server within 10 s")
            }
            let elapsed = (shown.receivedAt - start).microseconds
            try await app.call(Telephony1.Provider.reportCallEnded, destination: peer.uniqueName, path: NotifyingPeer.path, try UUID.bench(uuid), EndReason.remoteEnded.rawValue, 0)
            guard await server.closed.next(timeout: .seconds(10), where: { $0 == shown.id }) != nil else {
                throw BenchError("the no-op peer's notification was not closed")
            }
            return elapsed
        }

        let warmUp = 10
        var samples: [Double] = [], pings: [Double] = [], floors: [Double] = []
        for index in 0..<(warmUp + count) {
            // The first call is the daemon's: its notification is the peer's template.
            let floorFirst = index % 2 == 1
            if floorFirst, peer != nil {
                let elapsed = try await floorCall(index)
                if index >= warmUp { floors.append(elapsed) }
            }
            let uuid = UUID().uuidString.lowercased()
            let pinged = ContinuousClock.now
            _ = try await app.ping(Telephony1.busName)
            if index >= warmUp { pings.append((ContinuousClock.now - pinged).microseconds) }
            let start = ContinuousClock.now
            _ = try await app.telephony(Telephony1.Provider.reportNewIncomingCall, try UUID.bench(uuid), CallUpdate(handle: Handle(value: handle(index))), at: path)
            // The notification of this call (a server that appeared may first get the calls still ringing).
            let expected = shown(index)
            guard let shown = await server.notified.next(timeout: .seconds(10), where: { $0.body.split(separator: "\n").first == Substring(expected) }) else {
                throw BenchError("no Notify reached the notification server within 10 s")
            }
            if index >= warmUp { samples.append((shown.receivedAt - start).microseconds) }
            if index == 0 { peer?.template = shown }
            try await app.telephony(Telephony1.Provider.reportCallEnded, try UUID.bench(uuid), EndReason.remoteEnded.rawValue, 0, at: path)
            // One notification at a time: wait for this one to close.
            guard await server.closed.next(timeout: .seconds(10)) != nil else { throw BenchError("the notification was not closed") }
            guard await entries.next(timeout: .seconds(10)) != nil else { throw BenchError("the call was not recorded in Recents") }
            if !floorFirst, peer != nil {
                let elapsed = try await floorCall(index)
                if index >= warmUp { floors.append(elapsed) }
            }
        }
        // Released before returning, not at close: the next round's server takes the name at once,
        // and a close is asynchronous (the bus could still have the name owned: "name taken").
        try await server.connection.releaseName(NotificationServer.name)
        return Result(notify: Samples(samples), ping: Samples(pings), floor: peer == nil ? nil : Samples(floors))
    }
}

/// The floor of `ReportNewIncomingCall → Notify`: a provider's report answered at once with the
/// call's path, then the daemon's notification of a ringing call (`template`, its body's first line
/// the caller's handle) sent to the notification server, as the daemon does, and nothing else. The
/// call's end closes it (not timed: it keeps the server as the daemon's rounds leave it).
private final class NotifyingPeer: Sendable {
    static let path: ObjectPath = "/org/monkeycall/BenchNotify"
    let connection: Connection
    let objects: ObjectServer
    var uniqueName: String { connection.uniqueName }

    private struct State {
        var notification: NotificationServer.Notification?
        /// Calls whose Notify was answered, by uuid: the notification's id.
        var shown: [String: UInt32] = [:]
        /// Calls ended before their Notify was answered: closed when it is.
        var ended: Set<String> = []
    }

    private let state = Mutex(State())

    /// The daemon's notification, sent again with each call's handle. Set before the first report.
    var template: NotificationServer.Notification? {
        get { state.withLock { $0.notification } }
        set { state.withLock { $0.notification = newValue } }
    }

    init(address: String) throws {
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        let gone = DBusError.failed("the notifying peer is closed")
        let provider = Interface(Telephony1.Provider.interface) {
            Method.replyingLater(Telephony1.Provider.reportNewIncomingCall, owner: self, gone: gone) { peer, reply, uuid, update in
                guard let handle = update.handle?.value else { throw DBusError.invalidArgs("no handle") }
                reply.send(Telephony1.callPath(uuid.apiString))
                try peer.notify(uuid.apiString, handle: handle)
            }
            Method(Telephony1.Provider.reportCallEnded, owner: self, gone: gone) { peer, _, uuid, _, _ in
                peer.end(uuid.apiString)
            }
        }
        _ = try objects.export(Self.path, [provider])
    }

    private func notify(_ uuid: String, handle: String) throws {
        guard let template else { throw DBusError.failed("the notifying peer has no notification to send yet") }
        let lines = template.body.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let message = try Message.methodCall(destination: NotificationServer.name, path: NotificationServer.path,
                                             interface: NotificationServer.name, member: "Notify")
        try message.append([.string(template.appName), .uint32(0), .string(template.icon), .string(template.summary),
                            .string(([handle] + lines).joined(separator: "\n")), template.actions.dbusValue, template.hints.dbusValue,
                            .int32(template.timeout)])
        connection.send(call: message) { [weak self] result in
            guard let self, case .success(let reply) = result, case .uint32(let id)? = try? reply.arguments().first else { return }
            let close = state.withLock {
                if $0.ended.remove(uuid) != nil { return true }
                $0.shown[uuid] = id
                return false
            }
            if close { self.close(notification: id) }
        }
    }

    private func end(_ uuid: String) {
        let id: UInt32? = state.withLock {
            if let id = $0.shown.removeValue(forKey: uuid) { return id }
            $0.ended.insert(uuid)
            return nil
        }
        if let id { close(notification: id) }
    }

    private func close(notification id: UInt32) {
        guard let message = try? Message.methodCall(destination: NotificationServer.name, path: NotificationServer.path,
                                                    interface: NotificationServer.name, member: "CloseNotification"),
              (try? message.append([.uint32(id)])) != nil else { return }
        connection.send(call: message) { _ in }
    }

    func close() { connection.close() }
}
