import Testing
@testable import TelephonyCore

@Suite("monkeycall:, tel: and sip: links")
struct CallLinkTests {
    @Test(arguments: [
        ("monkeycall://alice", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "alice"))),
        ("monkeycall:alice", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "alice"))),
        ("MonkeyCall://alice/", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "alice"))),
        // An empty host, as in file:///.
        ("monkeycall:///alice", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "alice"))),
        ("monkeycall://alice?video=1", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "alice"), video: true)),
        ("monkeycall:bob?foo=bar&video=true", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "bob"), video: true)),
        ("monkeycall:bob?video=0", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "bob"))),
        ("monkeycall:+1%20555%20123", CallLink(scheme: "monkeycall", handle: Handle(type: .phoneNumber, value: "+1 555 123"))),
        ("monkeycall:alice%40example.org", CallLink(scheme: "monkeycall", handle: Handle(type: .emailAddress, value: "alice@example.org"))),
        ("monkeycall:J%C3%BCrgen", CallLink(scheme: "monkeycall", handle: Handle(type: .generic, value: "Jürgen"))),
        ("tel:+1-201-555-0123", CallLink(scheme: "tel", handle: Handle(type: .phoneNumber, value: "+12015550123"))),
        ("tel:+1(201)555.0123;ext=22", CallLink(scheme: "tel", handle: Handle(type: .phoneNumber, value: "+12015550123"))),
        ("TEL:7042;phone-context=example.com", CallLink(scheme: "tel", handle: Handle(type: .phoneNumber, value: "7042"))),
        ("sip:bob@example.org", CallLink(scheme: "sip", handle: Handle(type: .generic, value: "sip:bob@example.org"))),
        ("SIPS:bob@example.org:5061;transport=tls?subject=hi", CallLink(scheme: "sips", handle: Handle(type: .generic, value: "sips:bob@example.org:5061;transport=tls"))),
        ("sip:%2B15550123@example.org", CallLink(scheme: "sip", handle: Handle(type: .generic, value: "sip:+15550123@example.org"))),
    ])
    func parses(_ text: String, _ expected: CallLink) throws {
        #expect(try CallLink(parsing: text) == expected)
    }

    @Test(arguments: [
        ("monkeycall:", CallLink.ParseError.emptyHandle),
        ("monkeycall://", .emptyHandle),
        ("monkeycall:///", .emptyHandle),
        ("monkeycall:%20?video=1", .emptyHandle),
        ("http://example.org", .unsupportedScheme("http")),
        ("alice", .noScheme),
        (":alice", .noScheme),
        ("monkeycall:%zz", .malformedEncoding),
        ("monkeycall:abc%4", .malformedEncoding),
        ("monkeycall:%C3%28", .malformedEncoding),
        ("monkeycall:al\u{7}ice", .controlCharacter),
        ("monkeycall:al%0Aice", .controlCharacter),
        ("tel:", .emptyHandle),
        ("sip:", .emptyHandle),
        ("sip:?subject=x", .emptyHandle),
        ("tel:call-me", .invalidNumber("call-me")),
        ("tel:+", .invalidNumber("+")),
    ])
    func refuses(_ text: String, _ expected: CallLink.ParseError) {
        #expect(throws: expected) { try CallLink(parsing: text) }
    }

    @Test func refusesLinksOver2KiB() {
        let long = "monkeycall:" + String(repeating: "a", count: 2048)
        #expect(throws: CallLink.ParseError.tooLong(long.utf8.count)) { try CallLink(parsing: long) }
        #expect(throws: Never.self) { try CallLink(parsing: String(long.prefix(2048))) }
    }
}

@Suite("Links go to the app that declared their scheme")
struct CallLinkRoutingTests {
    @Test func routing() throws {
        let f = Fixture()
        let link = try CallLink(parsing: "monkeycall:alice")
        let tel = try CallLink(parsing: "tel:+15551234")
        #expect(f.board.provider(for: link) == nil)
        let textOnly = try f.register("Chat") { $0.supportedHandleTypes = [.generic] }
        #expect(f.board.provider(for: tel) == nil)
        let phone = try f.register("Phone", owner: ":1.2")
        #expect(f.board.provider(for: tel)?.id == phone.id)
        #expect(f.board.provider(for: link) == nil)
        let monkey = try f.register("Monkey", owner: ":1.3") { $0.urlSchemes = ["MonkeyCall", "tel"] }
        #expect(f.board.provider(for: link)?.id == monkey.id)
        #expect(f.board.provider(for: tel)?.id == monkey.id)
        _ = textOnly
    }
}
