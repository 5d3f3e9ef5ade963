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
        let fixture = try await ServiceFixture(notifications: true)
        let server = try #require(fixture.notificationServer)
        let phone = try await fixture.provider("Phone", ["SupportedHandleTypes": ["phone-number"].dbusValue])
        let monkey = try await fixture.provider("Monkey", ["URLSchemes": ["monkeycall"].dbusValue, "SupportsVideo": .bool(true),
                                                              "SupportedHandleTypes": ["generic", "email-address"].dbusValue])

        let uuid = try await openURL(fixture, "monkeycall://alice?video=1")
        try await server.confirmLink()
        let start = try #require(await monkey.nextAction("start"))
        #expect(start.call == uuid)
        #expect(start.args["Handle"] == .string("alice") && start.args["HandleType"] == .string("generic") && start.args["Video"] == .bool(true))

        let tel = try await openURL(fixture, "tel:+1-201-555-0123")
        try await server.confirmLink()
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

    @Test("a link asks first: the question's text, buttons and hints; no start action before Call, one after")
    func linkAsksFirst() async throws {
        let fixture = try await ServiceFixture(notifications: true)
        let server = try #require(fixture.notificationServer)
        let app = try await fixture.provider("PyPhone", ["URLSchemes": ["monkeycall"].dbusValue, "DesktopEntry": .string("org.example.PyPhone")])
        let uuid = try await openURL(fixture, "monkeycall://bob")
        let question = try #require(await server.notified.next())
        #expect(question.summary == "Call bob with PyPhone?")
        #expect(question.actions == ["call", "Call", "cancel", "Cancel"])
        #expect(question.hints["urgency"] == .byte(2) && question.hints["resident"] == .bool(true))
        #expect(question.hints["desktop-entry"] == .string("org.example.PyPhone"))
        #expect(question.timeout == 60_000)
        // The question is all there is: no call and no start action yet.
        #expect(try await fixture.managedPaths().contains(Telephony1.callPath(uuid)) == false)
        try server.invoke(question.id, "call")
        let start = try #require(await app.nextAction("start"))
        #expect(start.call == uuid && start.args["Handle"] == .string("bob"))
        #expect(await server.closed.next() == question.id)
    }

    @Test("tel: with two apps and no choice asks which, one button per app; the choice is remembered; declaring tel: claims nothing (found on main: the first app to declare tel held it for good)")
    func telAsksWhichApp() async throws {
        let fixture = try await ServiceFixture(notifications: true)
        let server = try #require(fixture.notificationServer)
        let first = try await fixture.provider("First", ["URLSchemes": ["tel", "sip"].dbusValue])
        let phone = try await fixture.provider("Phone", ["SupportedHandleTypes": ["phone-number"].dbusValue])
        #expect(try await fixture.root(Telephony1.Manager.interface, "ListLinkHandlers") == [.dictionary(key: "s", value: "s", [])])
        let uuid = try await openURL(fixture, "tel:+1-201-555-0123")
        let question = try #require(await server.notified.next())
        #expect(question.summary == "Call +12015550123 with which app?", "\(question.summary)")
        #expect(question.actions == ["call", "Phone", "call-1", "First", "cancel", "Cancel"], "\(question.actions)")
        try server.invoke(question.id, "call-1")
        let start = try #require(await first.nextAction("start"))
        #expect(start.call == uuid)
        // Chosen: the next tel: link only confirms, with that app.
        #expect(try await fixture.root(Telephony1.Manager.interface, "ListLinkHandlers")
                == [.dictionary(key: "s", value: "s", [(key: .string("tel"), value: .string("First"))])])
        let again = try await openURL(fixture, "tel:+1-201-555-0124")
        let confirmed = try await server.confirmLink()
        #expect(confirmed.summary == "Call +12015550124 with First?", "\(confirmed.summary)")
        #expect(try await first.nextAction("start")?.call == again)
        _ = phone
    }

    @Test("a scheme's holder keeps it while it runs, whoever declares it later; when it is gone, another app is only reached through the user's answer and the scheme stays the holder's")
    func schemesNeverChangeHands() async throws {
        let fixture = try await ServiceFixture(notifications: true)
        let server = try #require(fixture.notificationServer)
        var holder: TestProvider? = try await fixture.provider("Holder", ["URLSchemes": ["monkeycall"].dbusValue])
        let later = try await fixture.provider("Later", ["URLSchemes": ["monkeycall"].dbusValue])
        _ = try await openURL(fixture, "monkeycall:bob")
        #expect(try await server.confirmLink().summary == "Call bob with Holder?")
        #expect(try await holder?.nextAction("start") != nil)
        holder = nil
        let handlers: [DBusValue] = [.dictionary(key: "s", value: "s", [(key: .string("monkeycall"), value: .string("Holder"))])]
        let deadline = ContinuousClock.now + .seconds(10)
        while try await fixture.managedPaths().count > 1, ContinuousClock.now < deadline { await Task.yield() }
        _ = try await openURL(fixture, "monkeycall:carol")
        #expect(try await server.confirmLink().summary == "Call carol with Later?")
        #expect(try await later.nextAction("start") != nil)
        #expect(try await fixture.root(Telephony1.Manager.interface, "ListLinkHandlers") == handlers)
    }

    /// Opens a link and presses Call: its start action is the next one the app gets, which shows that
    /// no start action for an earlier link came before it.
    func nextStartIsFor(_ fixture: ServiceFixture, _ app: TestProvider, _ server: NotificationServer) async throws {
        let uuid = try await openURL(fixture, "monkeycall://carol")
        try await server.confirmLink()
        let start = try #require(await app.nextAction("start"))
        #expect(start.call == uuid, "a start action came for a link that was not confirmed")
    }

    @Test("Cancel or a dismissal starts nothing")
    func cancelAndDismissal() async throws {
        let fixture = try await ServiceFixture(notifications: true)
        let server = try #require(fixture.notificationServer)
        let app = try await fixture.provider("PyPhone", ["URLSchemes": ["monkeycall"].dbusValue])
        _ = try await openURL(fixture, "monkeycall://bob")
        let question = try #require(await server.notified.next())
        try server.invoke(question.id, "cancel")
        #expect(await server.closed.next() == question.id)
        _ = try await openURL(fixture, "monkeycall://dave")
        let second = try #require(await server.notified.next())
        try server.dismiss(second.id)
        try await nextStartIsFor(fixture, app, server)
    }

    @Test("unanswered for 60 s on the service's clock, the question goes and nothing starts")
    func expiry() async throws {
        let fixture = try await ServiceFixture(manualClock: true, notifications: true)
        let server = try #require(fixture.notificationServer)
        let app = try await fixture.provider("PyPhone", ["URLSchemes": ["monkeycall"].dbusValue])
        _ = try await openURL(fixture, "monkeycall://bob")
        let question = try #require(await server.notified.next())
        await fixture.advanceClock(by: 59)
        #expect(await fixture.pendingTimers() == 1, "still asking after 59 s")
        await fixture.advanceClock(by: 1)
        #expect(await server.closed.next() == question.id)
        // Call pressed too late does nothing either.
        try server.invoke(question.id, "call")
        try await nextStartIsFor(fixture, app, server)
    }

    @Test("no notification server: OpenURL fails with CannotAsk, naming monkeycall dial")
    func noServerCannotAsk() async throws {
        let fixture = try await ServiceFixture()
        let app = try await fixture.provider("PyPhone", ["URLSchemes": ["monkeycall"].dbusValue])
        let error = await dbusError { _ = try await openURL(fixture, "monkeycall://bob") }
        #expect(error?.name == APIError.cannotAsk.rawValue)
        #expect(error?.message.contains("monkeycall dial bob") == true, "\(error?.message ?? "")")
        _ = app
    }
}
