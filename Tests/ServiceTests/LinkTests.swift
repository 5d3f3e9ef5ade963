import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

@Suite("Manager.OpenURL")
struct LinkTests {
    func openURL(_ fixture: ServiceFixture, _ url: String) async throws -> String {
        let reply = try await fixture.controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                      interface: Telephony1.Manager.interface, member: "OpenURL", [.string(url)])
        guard case .string(let uuid)? = reply.first else { throw TestSupportError("no UUID") }
        return uuid
    }

    @Test func linksReachTheAppThatDeclaredTheScheme() async throws {
        let fixture = try await ServiceFixture()
        let phone = try await fixture.provider("Phone", ["SupportedHandleTypes": ["phone-number"].dbusValue])
        let monkey = try await fixture.provider("Monkey", ["URLSchemes": ["monkeycall"].dbusValue, "SupportsVideo": .bool(true),
                                                              "SupportedHandleTypes": ["generic", "email-address"].dbusValue])

        let uuid = try await openURL(fixture, "monkeycall://alice?video=1")
        let start = try #require(await monkey.nextAction("start"))
        #expect(start.call == uuid)
        #expect(start.args["Handle"] == .string("alice") && start.args["HandleType"] == .string("generic") && start.args["Video"] == .bool(true))

        let tel = try await openURL(fixture, "tel:+1-201-555-0123")
        let dial = try #require(await phone.nextAction("start"))
        #expect(dial.call == tel && dial.args["Handle"] == .string("+12015550123") && dial.args["HandleType"] == .string("phone-number"))
    }

    @Test func badLinksAndMissingAppsAreClearErrors() async throws {
        let fixture = try await ServiceFixture()
        let invalid = await dbusError { _ = try await openURL(fixture, "http://example.org") }
        #expect(invalid?.name == APIError.invalidURL.rawValue)
        #expect(invalid?.message.contains("'http:'") == true)
        let encoding = await dbusError { _ = try await openURL(fixture, "monkeycall:%zz") }
        #expect(encoding?.message.contains("percent-encoding") == true)
        let noApp = await dbusError { _ = try await openURL(fixture, "monkeycall:alice") }
        #expect(noApp?.name == APIError.noProvider.rawValue)
        #expect(noApp?.message.contains("URLSchemes") == true)
    }
}
