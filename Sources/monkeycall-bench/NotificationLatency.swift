import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI

/// From `ReportNewIncomingCall` leaving the provider to the `Notify` call
/// arriving at a notification server on the same bus: the path a ringing call
/// takes through the service, libnotify's thread and GDBus.
///
/// Each round starts with the daemon quiet (the last call's notification closed and its Recents
/// entry written) and times one `Peer.Ping` to the daemon, then the call: the ratio compares the
/// two from the same state, in the same minutes of the run (the machine's speed drifts over a run).
enum NotificationLatency {
    struct Result {
        let notify: Samples
        let ping: Samples
        var ratio: Double { notify.median / ping.median }
    }

    /// `handle`: the caller of call `index`; `shown`: the first line of its notification's body
    /// (the caller's name, else the handle).
    static func measure(address: String, count: Int, handle: @escaping (Int) -> String = { "caller\($0)" },
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

        let warmUp = 10
        var samples: [Double] = [], pings: [Double] = []
        for index in 0..<(warmUp + count) {
            let uuid = UUID().uuidString.lowercased()
            let pinged = ContinuousClock.now
            _ = try await app.ping(Telephony1.busName)
            if index >= warmUp { pings.append((ContinuousClock.now - pinged).microseconds) }
            let start = ContinuousClock.now
            _ = try await app.telephony(Telephony1.Provider.reportNewIncomingCall, uuid, [Telephony1.Key.handle: .string(handle(index))], at: path)
            // The notification of this call (a server that appeared may first get the calls still ringing).
            let expected = shown(index)
            guard let shown = await server.notified.next(timeout: .seconds(10), where: { $0.body.split(separator: "\n").first == Substring(expected) }) else {
                throw BenchError("no Notify reached the notification server within 10 s")
            }
            if index >= warmUp { samples.append((shown.receivedAt - start).microseconds) }
            try await app.telephony(Telephony1.Provider.reportCallEnded, uuid, "remote-ended", 0, at: path)
            // One notification at a time: wait for this one to close.
            guard await server.closed.next(timeout: .seconds(10)) != nil else { throw BenchError("the notification was not closed") }
            guard await entries.next(timeout: .seconds(10)) != nil else { throw BenchError("the call was not recorded in Recents") }
        }
        // Released before returning, not at close: the next round's server takes the name at once,
        // and a close is asynchronous (the bus could still have the name owned: "name taken").
        try await server.connection.releaseName(NotificationServer.name)
        return Result(notify: Samples(samples), ping: Samples(pings))
    }
}
