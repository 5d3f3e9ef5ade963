import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

@Suite("Call directory updates over the bus")
struct DirectoryUpdateTests {
    static let update = Telephony1.CallDirectoryUpdate.interface
    static let directory = Telephony1.CallDirectory.interface

    func begin(_ app: TestProvider, incremental: Bool = false) async throws -> ObjectPath {
        guard case .objectPath(let path)? = try await app.call("BeginCallDirectoryUpdate", [.bool(incremental)]).first else {
            throw TestSupportError("no update path")
        }
        return path
    }

    @discardableResult
    func on(_ app: TestProvider, _ path: ObjectPath, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await app.connection.call(destination: Telephony1.busName, path: path, interface: Self.update, member: member, arguments)
    }

    @Test("entries block and name callers after Complete; CallKit's errors; nothing changes on Cancel or a vanished provider")
    func updates() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        var path = try await begin(app)
        let busy = await dbusError { _ = try await begin(app) }
        #expect(busy?.name == APIError.currentlyLoading.rawValue)
        let stranger = await dbusError {
            _ = try await fixture.controller.call(destination: Telephony1.busName, path: path, interface: Self.update, member: "Cancel")
        }
        #expect(stranger?.name == DBusError.Name.accessDenied)
        try await on(app, path, "AddBlockingEntries", [[Int64(14085550000), 14085550001].dbusValue])
        let outOfOrder = await dbusError { try await on(app, path, "AddBlockingEntries", [[Int64(14085550002), 14085550001].dbusValue]) }
        #expect(outOfOrder?.name == APIError.entriesOutOfOrder.rawValue)
        let removal = await dbusError { try await on(app, path, "RemoveBlockingEntries", [[Int64(14085550000)].dbusValue]) }
        #expect(removal?.name == APIError.unexpectedIncrementalRemoval.rawValue)
        try await on(app, path, "AddIdentificationEntries", [[Int64(14085559999)].dbusValue, ["Pizza Place"].dbusValue])
        try await on(app, path, "Complete")
        let gone = await dbusError { try await on(app, path, "Complete") }
        #expect(gone?.name == DBusError.Name.unknownObject)
        // A new app's directory is off until the user turns it on.
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+1 (408) 555-9999")]) == [.string(""), .bool(false)])
        try await fixture.root(Self.directory, "SetDirectoryEnabled", [.string("Monkey"), .bool(true)])

        #expect(try await fixture.root(Self.directory, "Identify", [.string("+1 (408) 555-9999")]) == [.string("Pizza Place"), .bool(false)])
        let blocked = await dbusError { try await app.reportIncoming("+1 408 555 0000", update: ["HandleType": .string("phone-number")]) }
        #expect(blocked?.name == APIError.filteredByBlockList.rawValue)
        let named = try await app.reportIncoming("+14085559999", update: ["HandleType": .string("phone-number")])
        #expect(try await fixture.callProperty(named, "CallerName") == .string("Pizza Place"))
        #expect(try await fixture.root(Self.directory, "ListDirectories")
                == [.array(element: "(sbtt)", [.structure([.string("Monkey"), .bool(true), .uint64(2), .uint64(1)])])])

        // Cancel, and a provider that leaves mid-update, change nothing.
        path = try await begin(app)
        try await on(app, path, "AddBlockingEntries", [[Int64(15550001)].dbusValue])
        try await on(app, path, "Cancel")
        path = try await begin(app, incremental: true)
        try await on(app, path, "RemoveAllBlockingEntries")
        app.connection.close()
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550001")]) == [.string(""), .bool(true)])

        // The user can switch a directory off.
        try await fixture.root(Self.directory, "SetDirectoryEnabled", [.string("Monkey"), .bool(false)])
        #expect(try await fixture.root(Self.directory, "Identify", [.string("+14085550001")]) == [.string(""), .bool(false)])
    }
}
