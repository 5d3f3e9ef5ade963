import DBus
import Foundation
import Glibc
@testable import PhoneModel
import Testing

/// The offer to answer calls from GNOME Shell's lock screen, as plain Swift: made once, remembered
/// in a private file, against a fake shell (the window's own test: PhoneWindowTests+LockScreenOffer).
@MainActor
struct LockScreenOfferTests {
    /// A state folder of the test's own, removed after `body`.
    func withStateFolder(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-state-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await body(folder)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test("Installed and off: offered when the window opens, remembered at once in a 0600 file in a 0700 folder under XDG_STATE_HOME, and not offered again; Turn On turns it on and says so")
    func offeredOnceAndTurnedOn() async throws {
        try await withStateFolder { folder in
            let memory = try #require(OfferMemory.standard(environment: ["XDG_STATE_HOME": folder, "HOME": "/nonexistent"]))
            #expect(memory.path == folder + "/monkeycall/lock-screen-offer")
            let backend = FakeBackend()
            backend.state.withLock { $0.lockScreenExtension = .off }
            let model = PhoneModel(backend: backend, offerMemory: memory)
            var told: [String] = [], changes = 0
            model.onToast = { told.append($0) }
            model.lockScreenOffer.onChange = { changes += 1 }
            await model.lockScreenOffer.check()
            #expect(model.lockScreenOffer.isShown && changes == 1)
            #expect(memory.wasOffered)
            #expect(mode(memory.path) == 0o600 && mode(folder + "/monkeycall") == 0o700, "\(String(mode(memory.path), radix: 8))")
            // Once a run: the window opening again asks nothing.
            await model.lockScreenOffer.check()
            #expect(backend.state.withLock { $0.lockScreenExtensionAsked } == 1)

            await model.lockScreenOffer.turnOn()
            #expect(!model.lockScreenOffer.isShown && changes == 2)
            #expect(backend.state.withLock { $0.lockScreenExtensionEnabled } == 1)
            #expect(told == ["Calls now ring on the lock screen, and show in the top bar"], "\(told)")
            #expect(try String(contentsOfFile: memory.path, encoding: .utf8) == "turned on\n")
            #expect(mode(memory.path) == 0o600)

            // The next start: not offered, and the shell not even asked (were it off again).
            backend.state.withLock { $0.lockScreenExtension = .off }
            let next = PhoneModel(backend: backend, offerMemory: memory)
            await next.lockScreenOffer.check()
            #expect(!next.lockScreenOffer.isShown)
            #expect(backend.state.withLock { $0.lockScreenExtensionAsked } == 1)
        }
    }

    @Test("Not Now hides it for good; without GNOME Shell, or with the extension on, nothing is offered or written; a loose state folder is made private")
    func notNowAndNothingToOffer() async throws {
        try await withStateFolder { folder in
            let memory = OfferMemory(path: folder + "/monkeycall/lock-screen-offer")
            let backend = FakeBackend()
            for shell in [ExtensionOffer.unavailable, .on] {
                backend.state.withLock { $0.lockScreenExtension = shell }
                let model = PhoneModel(backend: backend, offerMemory: memory)
                await model.lockScreenOffer.check()
                #expect(!model.lockScreenOffer.isShown, "\(shell)")
                #expect(!memory.wasOffered, "\(shell)")
            }
            try FileManager.default.createDirectory(atPath: folder + "/monkeycall", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            backend.state.withLock { $0.lockScreenExtension = .off }
            let model = PhoneModel(backend: backend, offerMemory: memory)
            await model.lockScreenOffer.check()
            #expect(model.lockScreenOffer.isShown)
            #expect(mode(folder + "/monkeycall") == 0o700)
            model.lockScreenOffer.notNow()
            #expect(!model.lockScreenOffer.isShown)
            #expect(try String(contentsOfFile: memory.path, encoding: .utf8) == "not now\n")
            #expect(backend.state.withLock { $0.lockScreenExtensionEnabled } == 0)
            let next = PhoneModel(backend: backend, offerMemory: memory)
            await next.lockScreenOffer.check()
            #expect(!next.lockScreenOffer.isShown)
        }
    }

    @Test("Turn On that fails says why in plain words; an offer that cannot be remembered (no home, a state folder that is a file) is not made")
    func failures() async throws {
        try await withStateFolder { folder in
            let backend = FakeBackend()
            backend.state.withLock { $0.lockScreenExtension = .off }
            for (error, text) in [(ExtensionNotEnabled() as any Error, "GNOME Shell did not turn on answering from the lock screen"),
                                  (DBusError(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "The name org.gnome.Shell was not provided"),
                                   "Could not turn on answering from the lock screen: The name org.gnome.Shell was not provided")] {
                try? FileManager.default.removeItem(atPath: folder)
                backend.state.withLock { $0.enableError = error }
                let model = PhoneModel(backend: backend, offerMemory: OfferMemory(path: folder + "/monkeycall/lock-screen-offer"))
                var told: [String] = []
                model.onToast = { told.append($0) }
                await model.lockScreenOffer.check()
                await model.lockScreenOffer.turnOn()
                #expect(told == [text], "\(told)")
                #expect(!model.lockScreenOffer.isShown)
            }

            #expect(OfferMemory.standard(environment: ["XDG_STATE_HOME": "relative"]) == nil)
            #expect(OfferMemory.standard(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/ada"])?.path == "/home/ada/.local/state/monkeycall/lock-screen-offer")
            let homeless = PhoneModel(backend: backend, offerMemory: nil)
            await homeless.lockScreenOffer.check()
            #expect(!homeless.lockScreenOffer.isShown)

            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: folder + "/monkeycall", contents: Data())
            let blocked = PhoneModel(backend: backend, offerMemory: OfferMemory(path: folder + "/monkeycall/lock-screen-offer"))
            await blocked.lockScreenOffer.check()
            #expect(!blocked.lockScreenOffer.isShown)
        }
    }
}
