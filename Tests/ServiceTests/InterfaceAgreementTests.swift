import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import TelephonyService
import Testing

/// `dbus/org.monkeycall.Telephony1.xml` is the contract; the daemon's
/// introspection must agree with it for every interface the daemon serves.
@Suite("The served interfaces agree with dbus/org.monkeycall.Telephony1.xml")
struct InterfaceAgreementTests {
    /// Members of the contract that later issues implement. Shrink this list as they land.
    static let pending: [String: Set<String>] = [:]
    static let pendingInterfaces: Set<String> = []

    static func contract() throws -> IntrospectionDocument {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/org.monkeycall.Telephony1.xml")
        return try IntrospectionDocument(xml: String(contentsOf: url, encoding: .utf8))
    }

    @Test func servedInterfacesMatchTheContract() async throws {
        let contract = try Self.contract()
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("Monkey")
        let call = try await app.reportIncoming()
        guard case .objectPath(let update)? = try await app.call("BeginCallDirectoryUpdate", [.bool(false)]).first else {
            Issue.record("no directory update"); return
        }
        var served: [String: IntrospectionDocument.InterfaceShape] = [:]
        for path in [Telephony1.rootPath, app.path, Telephony1.callPath(call), update] {
            let reply = try await fixture.controller.call(destination: Telephony1.busName, path: path,
                                                          interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            guard case .string(let xml)? = reply.first else { Issue.record("no XML at \(path)"); continue }
            for (name, shape) in try IntrospectionDocument(xml: xml).interfaces where name.hasPrefix("org.monkeycall.") {
                served[name] = shape
            }
        }
        #expect(Set(served.keys).union(Self.pendingInterfaces) == Set(contract.interfaces.keys))
        for (name, shape) in served {
            let promised = try #require(contract.interfaces[name], "\(name) is served but not in the contract")
            let servedMembers = Set(shape.members.map(\.description))
            let promisedMembers = Set(promised.members.map(\.description))
            #expect(servedMembers.subtracting(promisedMembers).isEmpty, "\(name) serves members the contract does not have: \(servedMembers.subtracting(promisedMembers).sorted())")
            let missing = Set(promised.members.filter { !servedMembers.contains($0.description) }.map { "\($0.kind.rawValue) \($0.name)" })
            #expect(missing == Self.pending[name, default: []], "\(name): not served \(missing.sorted()), expected pending \(Self.pending[name, default: []].sorted())")
        }
    }
}
