import Testing
@testable import TelephonyCore

/// The link expected from a text: its scheme, and the handle's value and type.
private func link(_ scheme: String, _ value: String, _ type: HandleType = .generic, video: Bool = false) -> CallLink {
    CallLink(scheme: scheme, handle: Handle(type: type, value: value), video: video)
}

@Suite("monkeycall:, tel: and sip: links")
struct CallLinkTests {
    @Test(arguments: [
        ("monkeycall://alice", link("monkeycall", "alice")),
        ("monkeycall:alice", link("monkeycall", "alice")),
        ("MonkeyCall://alice/", link("monkeycall", "alice")),
        // An empty host, as in file:///.
        ("monkeycall:///alice", link("monkeycall", "alice")),
        ("monkeycall://alice?video=1", link("monkeycall", "alice", video: true)),
        ("monkeycall:bob?foo=bar&video=true", link("monkeycall", "bob", video: true)),
        ("monkeycall:bob?video=0", link("monkeycall", "bob")),
        ("monkeycall:+1%20555%20123", link("monkeycall", "+1 555 123", .phoneNumber)),
        ("monkeycall:alice%40example.org", link("monkeycall", "alice@example.org", .emailAddress)),
        ("monkeycall:J%C3%BCrgen", link("monkeycall", "Jürgen")),
        ("tel:+1-201-555-0123", link("tel", "+12015550123", .phoneNumber)),
        ("tel:+1(201)555.0123;ext=22", link("tel", "+12015550123", .phoneNumber)),
        ("TEL:7042;phone-context=example.com", link("tel", "7042", .phoneNumber)),
        ("sip:bob@example.org", link("sip", "sip:bob@example.org")),
        ("SIPS:bob@example.org:5061;transport=tls?subject=hi", link("sips", "sips:bob@example.org:5061;transport=tls")),
        // callto: a number goes as tel: would; a name to the app that declared callto.
        ("callto:+1 (408) 555-0123", link("tel", "+14085550123", .phoneNumber)),
        ("callto://alice.smith?call", link("callto", "alice.smith")),
        ("sip:%2B15550123@example.org", link("sip", "sip:+15550123@example.org")),
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
        ("monkeycall:al\u{202E}ice", .controlCharacter),
        ("monkeycall:al%E2%80%8Fice", .controlCharacter),
        ("sip:bank%E2%81%A6@example.com", .controlCharacter),
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

@Suite("Links go to the app that holds their scheme, else the user chooses")
struct CallLinkRoutingTests {
    @Test func routing() throws {
        let f = Fixture()
        let link = try CallLink(parsing: "monkeycall:alice")
        let tel = try CallLink(parsing: "tel:+15551234")
        #expect(f.board.route(link, holder: nil) == .none(holder: nil))
        let textOnly = try f.register("Chat") { $0.supportedHandleTypes = [.generic] }
        #expect(f.board.route(tel, holder: nil) == .none(holder: nil))
        let phone = try f.register("Phone", owner: ":1.2")
        #expect(f.board.route(tel, holder: nil) == .app(phone))
        #expect(f.board.route(link, holder: "Gone") == .none(holder: "Gone"))
        let monkey = try f.register("Monkey", owner: ":1.3") { $0.urlSchemes = ["MonkeyCall", "tel"] }
        #expect(f.board.route(link, holder: nil) == .app(monkey))
        // Two apps take tel: and the user chose neither: the user chooses, newest first.
        #expect(f.board.route(tel, holder: nil) == .choose([monkey, phone]))
        // The holder keeps its scheme while it runs, whoever declares it later.
        #expect(f.board.route(tel, holder: "Phone") == .app(phone))
        let later = try f.register("Later", owner: ":1.4") { $0.urlSchemes = ["monkeycall"] }
        #expect(f.board.route(link, holder: "Monkey") == .app(monkey))
        #expect(f.board.route(link, holder: nil) == .choose([later, monkey]))
        // One choice per app (its newest provider), at most three.
        let second = try f.register("Phone", owner: ":1.2")
        let fourth = try f.register("Fourth", owner: ":1.5")
        #expect(f.board.route(tel, holder: nil) == .choose([fourth, second, later]))
        _ = textOnly
    }
}
