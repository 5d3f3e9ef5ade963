import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
@testable import MonkeyCallKit
import Testing

@Suite("MonkeyCallKit and the real monkeycalld: killed and restarted, or started by D-Bus activation")
final class RestartTests {
    /// Each test's own bus, stopped when the test is done.
    private let bus: PrivateBus
    /// Recents and call directories live with the bus, and so survive its daemons.
    private var database: String { bus.directory.appendingPathComponent("monkeycall.sqlite").path }

    init() async throws { bus = try await PrivateBus.start() }
    deinit { bus.stop() }

    private func startDaemon() async throws -> ChildProcess {
        try await bus.startMonkeycalld(["--database", database])
    }

    @Test("a delegate set after the service has said DidBegin still hears providerDidBegin")
    func lateDelegateHearsBegin() async throws {
        let daemon = try await startDaemon()
        defer { daemon.kill() }
        let provider = CXProvider(configuration: CXProviderConfiguration(localizedName: "Late"), serviceConnection: try ServiceConnection(address: bus.address))
        // Time for the registration to finish first, as on a loaded machine it did
        // between the two lines of `killAndRestart` below, and the event was lost.
        try await Task.sleep(for: .seconds(1))
        let delegate = RecordingDelegate(queue: nil)
        provider.setDelegate(delegate, queue: nil)
        #expect(await delegate.waitFor("began"))
    }

    @Test("SIGKILL with a call live: the provider hears providerDidReset, registers again by itself and hears providerDidBegin; the observer sees the call end; Recents and call directories are intact")
    func killAndRestart() async throws {
        let first = try await startDaemon()
        defer { first.kill() }
        let serviceConnection = try ServiceConnection(address: bus.address)
        let configuration = CXProviderConfiguration(localizedName: "Survivor")
        configuration.urlSchemes = ["survivor"]
        let provider = CXProvider(configuration: configuration, serviceConnection: serviceConnection)
        let delegate = RecordingDelegate(queue: nil)
        provider.setDelegate(delegate, queue: nil)
        #expect(await delegate.waitFor("began"))
        let controller = CXCallController(serviceConnection: serviceConnection, error: nil, queue: nil)
        let observer = RecordingObserver()
        controller.callObserver.setDelegate(observer, queue: nil)
        // Before the kill: a call in Recents and a call directory loaded.
        let finished = UUID()
        try await provider.reportNewIncomingCall(with: finished, update: CXCallUpdate())
        #expect(await observer.next(finished) { !$0.hasEnded } != nil)
        provider.reportCall(with: finished, endedAt: nil, reason: .remoteEnded)
        #expect(await observer.next(finished) { $0.hasEnded } != nil)
        guard case .objectPath(let directory)? = try await serviceConnection.call(try await provider.registeredPath(), Telephony1.Provider.interface,
                                                                     "BeginCallDirectoryUpdate", [.bool(false)]).first else {
            Issue.record("no directory update object")
            return
        }
        try await serviceConnection.call(directory, Telephony1.CallDirectoryUpdate.interface, "AddIdentificationEntries",
                            [[Int64(14_085_555_555)].dbusValue, ["Survivor Support"].dbusValue])
        try await serviceConnection.call(directory, Telephony1.CallDirectoryUpdate.interface, "Complete")
        // A new app's directory is off until the user enables it.
        try await serviceConnection.call(Telephony1.rootPath, Telephony1.CallDirectory.interface, "SetDirectoryEnabled", [.string("Survivor"), .bool(true)])
        let uuid = UUID()
        try await provider.reportNewIncomingCall(with: uuid, update: CXCallUpdate())
        #expect(await observer.next(uuid) { !$0.hasEnded } != nil)

        first.kill()
        #expect(await delegate.waitFor("reset"))
        #expect(await observer.next(uuid) { $0.hasEnded } != nil)
        #expect(controller.callObserver.calls.isEmpty)
        // While the service is away, calls fail with a clear error.
        let refused = await caught { try await controller.requestTransaction(with: CXEndCallAction(call: uuid)) }
        #expect((refused as? CXError)?.code == .serviceNotRunning, "\(String(describing: refused))")

        let second = try await startDaemon()
        defer { second.kill() }
        #expect(await delegate.waitFor("began"))
        // Registered again with the same configuration.
        let path = try await provider.registeredPath()
        let reply = try await serviceConnection.call(path, "org.freedesktop.DBus.Properties", "Get",
                                        [.string(Telephony1.Provider.interface), .string("Configuration")])
        let saved = reply.first?.unwrappedVariant.vardict
        #expect(saved?["Name"] == .string("Survivor") && saved?["URLSchemes"] == ["survivor"].dbusValue)
        try await controller.requestTransaction(with: CXStartCallAction(call: UUID(), handle: CXHandle(type: .generic, value: "erin")))
        #expect(await delegate.next(CXStartCallAction.self)?.handle.value == "erin")
        let again = UUID()
        try await provider.reportNewIncomingCall(with: again, update: CXCallUpdate())
        #expect(await observer.next(again) { !$0.hasEnded } != nil)

        // Recents and the directory survived the kill; the file is sound.
        let recents = try await serviceConnection.call(Telephony1.rootPath, Telephony1.Recents.interface, "List", [.uint32(10), .uint32(0)])
        guard case .array(_, let entries)? = recents.first else { Issue.record("no Recents list"); return }
        #expect(entries.compactMap { $0.vardict?["CallUUID"] } == [.string(finished.apiString)])
        let identified = try await serviceConnection.call(Telephony1.rootPath, Telephony1.CallDirectory.interface, "Identify", [.string("+1 (408) 555-5555")])
        #expect(identified == [.string("Survivor Support"), .bool(false)])
        let check = try await ChildProcess.run("/usr/bin/python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
                                                                    database])
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "\(check.stderr)")
    }

    @Test("where monkeycalld is installed for activation, a new provider starts it")
    func activation() async throws {
        try bus.installForActivation(Telephony1.busName, "monkeycalld", ["--address", bus.address])
        let serviceConnection = try ServiceConnection(address: bus.address)
        // The bus reads its service folder again.
        try await serviceConnection.connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "ReloadConfig")
        #expect(try await serviceConnection.connection.nameOwner(Telephony1.busName) == nil)
        let provider = CXProvider(configuration: CXProviderConfiguration(localizedName: "Activated"), serviceConnection: serviceConnection)
        let delegate = RecordingDelegate(queue: nil)
        provider.setDelegate(delegate, queue: nil)
        #expect(await delegate.waitFor("began", timeout: .seconds(30)))
        #expect(try await serviceConnection.connection.nameOwner(Telephony1.busName) != nil)
        try await provider.reportNewIncomingCall(with: UUID(), update: CXCallUpdate())
        provider.invalidate()
    }
}
