import FoundationEssentials

/// A command to baresip's `ctrl_tcp`: `{"command": …, "params": "…", "token": …}`.
/// `params` is always a JSON string: a number there crashes baresip 1.0.
public struct ControlCommand: Equatable, Sendable {
    public let command: String
    public let params: String?
    public var token: String?

    public init(_ command: String, _ params: String? = nil) {
        self.command = command
        self.params = params
    }

    /// The command's netstring frame.
    public var frame: Data {
        var object: [String: String] = ["command": command]
        if let params { object["params"] = params }
        if let token { object["token"] = token }
        // A dictionary of strings always encodes.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try! encoder.encode(object)
        return Netstring.encode(json)
    }

    // The commands the bridge uses (module `menu`).
    /// Makes the call with baresip's id `id` the current call, the one later commands act on.
    public static func callfind(_ id: String) -> Self { Self("callfind", id) }
    /// Makes line `n` of `listcalls` the current call.
    public static func line(_ n: Int) -> Self { Self("line", String(n)) }
    public static let accept = Self("accept")
    public static let hangup = Self("hangup")
    public static let hold = Self("hold")
    public static let resume = Self("resume")
    /// A toggle: mutes the current call's microphone, or unmutes it.
    public static let mute = Self("mute")
    public static let callstat = Self("callstat")
    public static let listcalls = Self("listcalls")
    public static func dial(_ uri: String) -> Self { Self("dial", uri) }
    public static func sndcode(_ digits: String) -> Self { Self("sndcode", digits) }
}

/// What baresip sends: an event (`"event": true`) or the reply to a command (`"response": true`).
public enum ControlMessage: Equatable, Sendable {
    case event(ControlEvent)
    case response(ControlResponse)

    public struct Unreadable: Error, CustomStringConvertible {
        public let description: String
    }

    private struct Wire: Decodable {
        var event: Bool?
        var response: Bool?
        var type: String?
        var id: String?
        var direction: String?
        var peeruri: String?
        var peerdisplayname: String?
        var param: String?
        var accountaor: String?
        var ok: Bool?
        var data: String?
        var token: String?
    }

    /// Reads one frame's JSON.
    public init(json: Data) throws {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: json)
        } catch {
            throw Unreadable(description: "not a ctrl_tcp message: \(String(decoding: json.prefix(80), as: UTF8.self))")
        }
        if wire.response == true {
            self = .response(ControlResponse(ok: wire.ok ?? false, data: wire.data ?? "", token: wire.token))
        } else if wire.event == true, let type = wire.type {
            self = .event(ControlEvent(type: type, id: wire.id, direction: wire.direction, peerURI: wire.peeruri,
                                       peerDisplayName: wire.peerdisplayname, param: wire.param, accountAOR: wire.accountaor))
        } else {
            throw Unreadable(description: "neither an event nor a response: \(String(decoding: json.prefix(80), as: UTF8.self))")
        }
    }
}

public struct ControlEvent: Equatable, Sendable {
    /// `CALL_INCOMING`, `CALL_ESTABLISHED`, `CALL_CLOSED`, `CALL_DTMF_START`, …
    public var type: String
    /// baresip's call id (the SIP Call-ID), on call events.
    public var id: String?
    /// `incoming` or `outgoing`.
    public var direction: String?
    public var peerURI: String?
    public var peerDisplayName: String?
    public var param: String?
    public var accountAOR: String?
}

public struct ControlResponse: Equatable, Sendable {
    public var ok: Bool
    /// The command's text output.
    public var data: String
    public var token: String?
}
