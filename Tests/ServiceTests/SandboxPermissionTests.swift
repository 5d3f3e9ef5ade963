import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Apps in a real bubblewrap sandbox against the service: what they may do, what answers
/// AccessDenied naming the app, and the same request from a host client still working.
@Suite("Sandboxed apps", .enabled(if: Sandbox.isAvailable, "bubblewrap is not installed"))
struct SandboxPermissionTests {
    static let appID = "org.example.PyPhone"
    typealias Manager = Telephony1.Manager

    func expectDenied(_ outcome: SandboxedApp.Outcome, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.isAccessDenied, "\(what): \(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.message.contains(Self.appID), "\(what): the message names no app: \(outcome.message)", sourceLocation: sourceLocation)
    }

    @Test("the user's own data and settings: Recents, Favorites, Manager settings, the block list, the directories — AccessDenied from the sandbox, working from the host")
    func usersOwn() async throws {
        let fixture = try await ServiceFixture()
        let app = try await SandboxedApp(appID: Self.appID, bus: fixture.bus)
        let recents = Telephony1.Recents.interface, favorites = Telephony1.Favorites.interface
        let directory = Telephony1.CallDirectory.interface

        // Recents and Favorites, every method and property.
        expectDenied(try await app.root(recents, "List", signature: "uu", [10, 0]), "Recents.List")
        expectDenied(try await app.root(recents, "Clear"), "Recents.Clear")
        expectDenied(try await app.root(recents, "MarkAllSeen"), "Recents.MarkAllSeen")
        expectDenied(try await app.get(Telephony1.rootPath, recents, "MissedCount"), "Recents.MissedCount")
        expectDenied(try await app.root(favorites, "List"), "Favorites.List")
        expectDenied(try await app.root(favorites, "Add", signature: "ssss", ["alice", "generic", "Alice", ""]), "Favorites.Add")
        #expect(try await fixture.root(recents, "List", [.uint32(10), .uint32(0)]) == [.array(element: "a{sv}", [])])
        let favorite = try await fixture.root(favorites, "Add", [.string("alice"), .string("generic"), .string("Alice"), .string("")])
        #expect(favorite.count == 1)
        guard case .array(_, let listed)? = try await fixture.root(favorites, "List").first else { throw TestSupportError("no favorites") }
        #expect(listed.count == 1)

        // The writable Manager settings, by Set and by reading them; Version stays readable.
        let set = try await app.call(Telephony1.rootPath, "org.freedesktop.DBus.Properties", "Set", signature: "ssv",
                                     [Manager.interface, Manager.doNotDisturb.name, true])
        expectDenied(set, "Set DoNotDisturb")
        expectDenied(try await app.get(Telephony1.rootPath, Manager.interface, Manager.doNotDisturb.name), "Get DoNotDisturb")
        #expect(try await app.get(Telephony1.rootPath, Manager.interface, Manager.version.name).result as? String == Telephony1.version)
        try await fixture.controller.set(Manager.doNotDisturb, destination: Telephony1.busName, path: Telephony1.rootPath, true)
        #expect(try await fixture.controller.get(Manager.doNotDisturb, destination: Telephony1.busName, path: Telephony1.rootPath) == true)

        // The block list and the directories.
        expectDenied(try await app.root(directory, "BlockHandle", signature: "s", ["+44*"]), "BlockHandle")
        expectDenied(try await app.root(directory, "UnblockHandle", signature: "s", ["+44*"]), "UnblockHandle")
        expectDenied(try await app.get(Telephony1.rootPath, directory, "BlockedHandles"), "BlockedHandles")
        expectDenied(try await app.root(directory, "ListDirectories"), "ListDirectories")
        expectDenied(try await app.root(directory, "SetDirectoryEnabled", signature: "sb", ["Bank", false]), "SetDirectoryEnabled")
        try await fixture.root(directory, "BlockHandle", [.string("+44*")])
        #expect(try await fixture.root(directory, "Identify", [.string("+441234")]) == [.string(""), .bool(true)])
        let host = try await fixture.provider("Bank")
        guard case .objectPath(let update)? = try await host.call("BeginCallDirectoryUpdate", [.bool(false)]).first else {
            throw TestSupportError("no directory update")
        }
        _ = try await host.connection.call(destination: Telephony1.busName, path: update, interface: Telephony1.CallDirectoryUpdate.interface,
                                           member: "Complete")
        try await fixture.root(directory, "SetDirectoryEnabled", [.string("Bank"), .bool(false)])
        #expect(try await fixture.root(directory, "ListDirectories")
                == [.array(element: "(sbtt)", [.structure([.string("Bank"), .bool(false), .uint64(0), .uint64(0)])])])
    }

    @Test("another app's providers and calls: hidden from GetManagedObjects, AccessDenied on reads and methods, Unentitled through CallController even for an app without a provider; its own work")
    func otherApps() async throws {
        let fixture = try await ServiceFixture()
        let host = try await fixture.provider("HostPhone")
        let hostCall = try await host.reportIncoming("alice")
        let hostCallPath = Telephony1.callPath(hostCall)

        // An app with no provider yet: the controller refuses it the host's call.
        let app = try await SandboxedApp(appID: Self.appID, bus: fixture.bus)
        let early = try await app.root(Telephony1.CallController.interface, "AnswerCall", signature: "s", [hostCall])
        #expect(early.error == APIError.unentitled.rawValue, "\(early)")

        let mine = try await app.registerProvider(name: "PyPhone")
        let myCall = try await app.reportIncoming(mine, "bob")
        let myCallPath = Telephony1.callPath(myCall)

        // What GetManagedObjects shows each.
        let managed = try await app.root("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        let seen = Set((managed.result as? [String: Any] ?? [:]).keys)
        #expect(seen == [mine.rawValue, myCallPath.rawValue], "\(seen)")
        let all = Set(try await fixture.managedPaths().map(\.rawValue))
        #expect(all == [mine.rawValue, myCallPath.rawValue, host.path.rawValue, hostCallPath.rawValue], "\(all)")

        // Property reads and methods of the other app's objects.
        expectDenied(try await app.get(host.path, Telephony1.Provider.interface, "Name"), "Get another app's provider Name")
        expectDenied(try await app.call(host.path, "org.freedesktop.DBus.Properties", "GetAll", signature: "s", [Telephony1.Provider.interface]),
                     "GetAll of another app's provider")
        expectDenied(try await app.call(host.path, Telephony1.Provider.interface, "ReportCallEnded", signature: "sst", [hostCall, "failed", 0]),
                     "ReportCallEnded on another app's provider")
        expectDenied(try await app.get(hostCallPath, Telephony1.Call.interface, "Handle"), "Get another app's call Handle")
        expectDenied(try await app.call(hostCallPath, Telephony1.Call.interface, "Answer"), "Call.Answer of another app's call")
        let unentitled = try await app.root(Telephony1.CallController.interface, "EndCall", signature: "s", [hostCall])
        #expect(unentitled.error == APIError.unentitled.rawValue, "\(unentitled)")
        #expect(unentitled.message.contains(Self.appID), "\(unentitled.message)")
        let start = try await app.root(Telephony1.CallController.interface, "StartCall", signature: "sa{sv}",
                                       ["carol", ["Provider": host.path.rawValue]])
        #expect(start.error == APIError.unentitled.rawValue || start.error == DBusError.Name.invalidArgs, "\(start)")

        // Its own: the provider's AppId, its call, the controller on it.
        #expect(try await app.get(mine, Telephony1.Provider.interface, "AppId").result as? String == Self.appID)
        #expect(try await app.get(myCallPath, Telephony1.Call.interface, "Handle").result as? String == "bob")
        let answered = try await app.root(Telephony1.CallController.interface, "AnswerCall", signature: "s", [myCall])
        #expect(answered.error == nil, "\(answered)")

        // The host sees and controls everything, and knows who is who.
        #expect(try await fixture.controller.call(destination: Telephony1.busName, path: mine, interface: "org.freedesktop.DBus.Properties",
                                                  member: "Get", [.string(Telephony1.Provider.interface), .string("AppId")])
                == [.variant(.string(Self.appID))])
        #expect(try await fixture.controller.call(destination: Telephony1.busName, path: host.path, interface: "org.freedesktop.DBus.Properties",
                                                  member: "Get", [.string(Telephony1.Provider.interface), .string("AppId")])
                == [.variant(.string(""))])
        #expect(try await fixture.callProperty(hostCall, "Handle") == .string("alice"))
        let transaction = try await fixture.control("EndCall", [.string(hostCall)])
        #expect(transaction.count == 1)
        #expect(await host.nextAction("end") != nil)
    }

    @Test("OpenURL and RegisterProvider stay open to a sandboxed app")
    func allowed() async throws {
        // A link asks the user first: there must be a notification server to ask through.
        let fixture = try await ServiceFixture(notifications: true)
        let app = try await SandboxedApp(appID: Self.appID, bus: fixture.bus)
        _ = try await app.registerProvider(name: "PyPhone")
        let opened = try await app.root(Manager.interface, "OpenURL", signature: "s", ["tel:+14085551234"])
        #expect(opened.error == nil, "\(opened)")
        #expect(opened.result is String, "\(opened)")
    }
}
