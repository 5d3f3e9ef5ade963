@testable import BaresipBridge
import Foundation
import MonkeyCallKit
import Testing

@Suite("ctrl_tcp framing and messages")
struct FramingTests {
    @Test("a command is one netstring of JSON whose params is a string")
    func commandFrame() throws {
        var command = ControlCommand.line(2)
        command.token = "t1"
        let frame = String(decoding: command.frame, as: UTF8.self)
        let json = #"{"command":"line","params":"2","token":"t1"}"#
        #expect(frame == "\(json.utf8.count):\(json),")
    }

    @Test("frames are found whatever the reads' boundaries, several in one read")
    func decoderSplitsAndJoins() throws {
        let stream = Data("5:hello,0:,3:abc,".utf8)
        for cut in 0...stream.count {
            var decoder = Netstring.Decoder()
            let frames = try decoder.feed(stream.prefix(cut)) + decoder.feed(stream.dropFirst(cut))
            #expect(frames.map { String(decoding: $0, as: UTF8.self) } == ["hello", "", "abc"], "cut at \(cut)")
        }
    }

    @Test("a stream that is not netstrings is an error naming what is wrong")
    func malformed() {
        var missingComma = Netstring.Decoder()
        #expect(throws: Netstring.MalformedFrame.self) { try missingComma.feed(Data("3:abcX".utf8)) }
        var notLength = Netstring.Decoder()
        #expect(throws: Netstring.MalformedFrame.self) { try notLength.feed(Data("{\"event\":true}".utf8)) }
        var tooLong = Netstring.Decoder()
        #expect(throws: Netstring.MalformedFrame.self) { try tooLong.feed(Data("999999999:".utf8)) }
    }

    @Test("events and responses as baresip 1.0 sends them")
    func messages() throws {
        let incoming = #"{"event":true,"type":"CALL_INCOMING","class":"call","accountaor":"sip:alice@127.0.0.1:15060","direction":"incoming","peeruri":"sip:bob@127.0.0.1:15062","peerdisplayname":"Bob","id":"ee1e1b14b8e3d496","param":"sip:bob@127.0.0.1:15062"}"#
        #expect(try ControlMessage(json: Data(incoming.utf8)) == .event(ControlEvent(
            type: "CALL_INCOMING", id: "ee1e1b14b8e3d496", direction: "incoming", peerURI: "sip:bob@127.0.0.1:15062",
            peerDisplayName: "Bob", param: "sip:bob@127.0.0.1:15062", accountAOR: "sip:alice@127.0.0.1:15060")))
        let rtcp = #"{"event":true,"type":"CALL_RTCP","class":"call","id":"x","param":"audio","rtcp_stats":{"tx":{"sent":0},"rtt":0}}"#
        #expect(throws: Never.self) { try ControlMessage(json: Data(rtcp.utf8)) }
        let response = #"{"response":true,"ok":false,"data":"Invalid argument","token":"mc3"}"#
        #expect(try ControlMessage(json: Data(response.utf8)) == .response(ControlResponse(ok: false, data: "Invalid argument", token: "mc3")))
        #expect(throws: ControlMessage.Unreadable.self) { try ControlMessage(json: Data("[1]".utf8)) }
    }
}

@Suite("baresip events → MonkeyCall reports")
struct EventMappingTests {
    func event(_ type: String, _ direction: String = "incoming", param: String? = nil, name: String? = nil) -> ControlEvent {
        ControlEvent(type: type, id: "c1", direction: direction, peerURI: "sip:bob@example.org", peerDisplayName: name, param: param)
    }

    @Test("CALL_INCOMING rings with the peer's URI and display name; RINGING and PROGRESS start connecting; ESTABLISHED connects")
    func reports() {
        #expect(CallEvent(event("CALL_INCOMING", name: "Bob")) == .incoming(id: "c1", handle: "sip:bob@example.org", callerName: "Bob"))
        #expect(CallEvent(event("CALL_INCOMING", name: "")) == .incoming(id: "c1", handle: "sip:bob@example.org", callerName: nil))
        #expect(CallEvent(event("CALL_RINGING", "outgoing")) == .startedConnecting(id: "c1"))
        #expect(CallEvent(event("CALL_PROGRESS", "outgoing")) == .startedConnecting(id: "c1"))
        #expect(CallEvent(event("CALL_ESTABLISHED")) == .established(id: "c1"))
        #expect(CallEvent(event("CALL_RTCP")) == nil)
        #expect(CallEvent(event("CALL_DTMF_START", param: "1")) == nil)
        #expect(CallEvent(ControlEvent(type: "REGISTER_OK")) == nil)
    }

    @Test("CALL_CLOSED's param gives the end reason", arguments: [
        ("Connection reset by peer", CXCallEndedReason.remoteEnded),
        ("486 Rejected", .failed),
        ("486 Busy Here", .failed),
        ("603 Decline", .failed),
        ("408 Request Timeout", .failed),
        ("Connection timed out", .failed),
        ("Connection refused", .failed),
        ("Call completed elsewhere", .answeredElsewhere),
        ("", .failed),
    ])
    func endReasons(param: String, reason: CXCallEndedReason) {
        #expect(CallEvent(event("CALL_CLOSED", "outgoing", param: param)) == .closed(id: "c1", reason: reason, param: param))
    }

    @Test("callstat and listcalls output")
    func commandOutput() throws {
        let callstat = "\n===== Call debug (INCOMING) =====\n local_uri:  <sip:alice@127.0.0.1:15060>\n peer_uri:   <sip:bob@127.0.0.1:15062>\n af=AF_INET id=e8b1c97830f122c1\n direction: Incoming\n"
        #expect(CommandOutput.callID(fromCallstat: callstat) == "e8b1c97830f122c1")
        #expect(CommandOutput.isIncoming(callstat: callstat))
        #expect(CommandOutput.peer(fromCallstat: callstat)?.uri == "sip:bob@127.0.0.1:15062")
        #expect(CommandOutput.peer(fromCallstat: callstat)?.displayName == nil)
        let named = try #require(CommandOutput.peer(fromCallstat: " peer_uri:   \"Bob\" <sip:bob@127.0.0.1:15062>\n"))
        #expect(named.uri == "sip:bob@127.0.0.1:15062" && named.displayName == "Bob")
        #expect(CommandOutput.callID(fromCallstat: "\n(no active call)\n") == nil)
        let listing = "\n--- Active calls (2) ---\n> [line 1]  0:00:00  ESTABLISHED             sip:bob@127.0.0.1:15062\n  [line 2]  0:00:00   INCOMING  (on hold)  sip:carol@127.0.0.1:15064\n\n"
        #expect(CommandOutput.lines(fromListcalls: listing) == [
            .init(number: 1, state: "ESTABLISHED", onHold: false, peer: "sip:bob@127.0.0.1:15062"),
            .init(number: 2, state: "INCOMING", onHold: true, peer: "sip:carol@127.0.0.1:15064"),
        ])
        #expect(CommandOutput.lines(fromListcalls: "\n--- Active calls (0) ---\n\n").isEmpty)
        #expect(CommandOutput.isMuted(fromMuteReply: "\ncall muted\n") == true)
        #expect(CommandOutput.isMuted(fromMuteReply: "\ncall un-muted\n") == false)
    }
}

@Suite("SIP accounts and the baresip configuration")
struct AccountTests {
    @Test("an account with or without a display name and parameters")
    func parse() throws {
        let plain = try SIPAccount("sip:alice@example.org")
        #expect(plain.displayName == nil && plain.uri == "sip:alice@example.org" && plain.domain == "example.org")
        let named = try SIPAccount(#""Alice Smith" <sip:alice@example.org:5070>;regint=0"#)
        #expect(named.displayName == "Alice Smith" && named.uri == "sip:alice@example.org:5070" && named.parameters == ";regint=0")
        #expect(named.domain == "example.org:5070")
        #expect(named.accountsLine(password: "s3cret") == #""Alice Smith" <sip:alice@example.org:5070>;regint=0;auth_pass=s3cret;answermode=manual"#)
    }

    @Test("bad accounts are refused with a message saying what to type", arguments: ["alice", "sip:alice", "\"Alice <sip:a@b>", "<sip:a@b", "sip:a@b;auth_pass=x"])
    func invalid(_ text: String) {
        #expect(throws: SIPAccount.Invalid.self) { try SIPAccount(text) }
    }

    @Test("handles become SIP URIs: phone numbers and names at the account's domain")
    func dialURIs() throws {
        let account = try SIPAccount("sip:alice@example.org")
        #expect(account.dialURI(for: "sip:bob@other.net") == "sip:bob@other.net")
        #expect(account.dialURI(for: "sips:bob@other.net") == "sips:bob@other.net")
        #expect(account.dialURI(for: "bob@other.net") == "sip:bob@other.net")
        #expect(account.dialURI(for: "+1 (408) 555-0123") == "sip:+14085550123@example.org")
        #expect(account.dialURI(for: "bob") == "sip:bob@example.org")
        #expect(SIPAccount.dialURI(for: "bob", domain: nil) == "sip:bob")
    }

    @Test("the control address must be HOST:PORT")
    func controlAddress() throws {
        #expect(try ControlAddress("127.0.0.1:4444") == ControlAddress(host: "127.0.0.1", port: 4444))
        #expect(try ControlAddress("[::1]:4444") == ControlAddress(host: "::1", port: 4444))
        #expect(throws: ControlAddress.Invalid.self) { try ControlAddress("4444") }
        #expect(throws: ControlAddress.Invalid.self) { try ControlAddress("localhost:0") }
        #expect(throws: ControlAddress.Invalid.self) { try ControlAddress(":4444") }
    }

    @Test("the configuration's files are 0600 in a 0700 folder, with ctrl_tcp, menu and the account")
    func writtenFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-baresip-config-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = BaresipConfiguration(account: try SIPAccount("sip:alice@example.org"), password: "pw",
                                                 control: ControlAddress(host: "127.0.0.1", port: 4455))
        configuration.headlessAudio = true
        try configuration.write(to: directory)
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        #expect(try mode(directory.path) == 0o700)
        for name in ["config", "accounts"] {
            #expect(try mode(directory.appendingPathComponent(name).path) == 0o600, "\(name)")
        }
        let config = try String(contentsOf: directory.appendingPathComponent("config"), encoding: .utf8)
        #expect(config.contains("ctrl_tcp_listen 127.0.0.1:4455") && config.contains("module_app menu.so") && config.contains("audio_source ausine,440"))
        let accounts = try String(contentsOf: directory.appendingPathComponent("accounts"), encoding: .utf8)
        #expect(accounts == "<sip:alice@example.org>;auth_pass=pw;answermode=manual\n")
    }
}
