import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// One app reporting incoming calls as fast as the bus takes them, against the
/// real daemon ringing through libnotify.
@Suite("Flood guard")
struct FloodTests {
    @Test("a flood of incoming calls: another app's call rings with a notification of its own, the flood gets LimitsExceeded after the bound, the desktop a handful of notifications")
    func flood() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let flood = try await TestProvider(bus: daemon.bus, name: "Flood", configuration: [:])
        let quiet = try await TestProvider(bus: daemon.bus, name: "Quiet", configuration: [:])

        let attempts = 2000
        let started = ContinuousClock.now
        let flooding = Task { () -> (accepted: Int, refused: [DBusError]) in
            try await withThrowingTaskGroup(of: DBusError?.self) { group in
                var accepted = 0, refused: [DBusError] = []
                var sent = 0
                func send() {
                    sent += 1
                    group.addTask {
                        do {
                            try await flood.reportIncoming("caller-\(UUID().uuidString.prefix(8))")
                            return nil
                        } catch let error as DBusError {
                            return error
                        }
                    }
                }
                // 64 in flight: as fast as one connection can push them.
                while sent < 64 { send() }
                while let result = try await group.next() {
                    if let result { refused.append(result) } else { accepted += 1 }
                    if sent < attempts { send() }
                }
                return (accepted, refused)
            }
        }

        // The flood is ringing: now the other app's call.
        #expect(await server.notified.next(where: { $0.appName == "Flood" }) != nil)
        let call = try await quiet.reportIncoming("quinn")
        let shown = await server.notified.next(timeout: .seconds(5), where: { $0.appName == "Quiet" })
        #expect(shown?.body == "quinn", "the quiet app's call got no notification within 5 s")

        let (accepted, refused) = try await flooding.value
        let elapsed = (ContinuousClock.now - started).components.seconds + 1
        #expect(accepted >= 20 && accepted <= 20 + 10 * Int(elapsed) + 1, "accepted \(accepted) in about \(elapsed) s")
        #expect(refused.count == attempts - accepted)
        let message = refused.first?.message ?? ""
        #expect(refused.allSatisfy { $0.name == DBusError.Name.limitsExceeded }, "\(Set(refused.map(\.name)))")
        let guardWords = message.contains("20 at once") && message.contains("10 per second")
        // Under ThreadSanitizer the app sends no faster than the guard's 10 a second: then the
        // bound on one app's ringing calls (100) refuses first.
        let boundWords = Deadlines.underThreadSanitizer && message.contains("ringing calls")
        #expect(message.contains("provider Flood") && (guardWords || boundWords), "\(message)")

        // The desktop: three calls with a notification each (the quiet app's among them), one counting the rest.
        let left = accepted + 1 - 3
        let summary = await server.notified.next(where: { $0.summary == "\(left) more incoming calls" })
        #expect(summary?.body == "Flood: \(left)", "\(String(describing: summary))")
        let notified = Dictionary(server.notified.all.map { ($0.id, $0) }) { _, newer in newer }
        let open = Set(notified.keys).subtracting(server.closed.all)
        #expect(open.count == 4, "open: \(open.compactMap { notified[$0]?.summary })")
        #expect(notified.count <= 5, "\(notified.count) notifications for \(accepted + 1) calls")
        #expect(open.contains(try #require(shown).id))

        // The quiet app's call is answered as usual.
        #expect(try await daemon.cli("answer", call).status == 0)
        #expect(try await quiet.perform("answer").call == call)
    }

    @Test("beyond three ringing calls one notification counts the rest; a call that stops ringing makes room for the next; at most three missed calls stay")
    func boundedNotifications() async throws {
        let daemon = try await RunningDaemon()
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await TestProvider(bus: daemon.bus, name: "Monkey", configuration: [:])
        var calls: [String] = []
        for index in 1...5 { calls.append(try await app.reportIncoming("caller\(index)")) }
        #expect(await server.notified.next(where: { $0.summary == "2 more incoming calls" })?.body == "Monkey: 2")
        let shown = server.notified.all.filter { $0.summary == "Incoming call" }
        #expect(shown.map(\.body) == ["caller1", "caller2", "caller3"])

        func end(_ index: Int, _ reason: String) async throws {
            try await app.call("ReportCallEnded", [.string(calls[index - 1]), .string(reason), .uint64(0)])
        }
        try await end(1, "remote-ended")
        #expect(await server.notified.next(where: { $0.body == "caller4" }) != nil)
        #expect(await server.notified.next(where: { $0.summary == "1 more incoming call" }) != nil)
        try await end(2, "remote-ended")
        #expect(await server.notified.next(where: { $0.body == "caller5" }) != nil)
        let summaryID = try #require(server.notified.all.first { $0.summary.hasSuffix("more incoming calls") }?.id)
        #expect(await server.closed.next(where: { $0 == summaryID }) != nil)

        // Four missed calls: the oldest missed-call notification makes room.
        for index in 3...5 { try await end(index, "unanswered") }
        let sixth = try await app.reportIncoming("caller6")
        try await app.call("ReportCallEnded", [.string(sixth), .string("unanswered"), .uint64(0)])
        #expect(await server.notified.next(where: { $0.summary == "Missed call" && $0.body.hasPrefix("caller6\n") }) != nil)
        let missed = server.notified.all.filter { $0.summary == "Missed call" }
        // Each says the caller, then when (issue 20).
        #expect(missed.map { $0.body.components(separatedBy: "\n")[0] } == ["caller3", "caller4", "caller5", "caller6"])
        #expect(await server.closed.next(where: { $0 == missed[0].id }) != nil)
        let open = Set(server.notified.all.map(\.id)).subtracting(server.closed.all)
        #expect(open == Set(missed.dropFirst().map(\.id)))
    }
}
