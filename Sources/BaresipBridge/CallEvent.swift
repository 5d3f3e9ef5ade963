import FoundationEssentials
import MonkeyCallKit
import ScreenText

/// What a baresip event means for a call, as the bridge reports it to MonkeyCall.
public enum CallEvent: Equatable, Sendable {
    /// A call rings here (`CALL_INCOMING`): handle and the caller's name when the INVITE gave one.
    case incoming(id: String, handle: String, callerName: String?)
    /// An outgoing call reached the other side (`CALL_RINGING`, `CALL_PROGRESS`).
    case startedConnecting(id: String)
    /// The call is up (`CALL_ESTABLISHED`).
    case established(id: String)
    /// The call is over (`CALL_CLOSED`), with the reason read from its `param`.
    case closed(id: String, reason: CXCallEndedReason, param: String)

    /// The meaning of `event`, or nil for events that change nothing MonkeyCall shows
    /// (SDP, RTCP, DTMF, registration).
    public init?(_ event: ControlEvent) {
        guard let id = event.id, !id.isEmpty else { return nil }
        let outgoing = event.direction == "outgoing"
        switch event.type {
        case "CALL_INCOMING":
            guard !outgoing else { return nil }
            let name = event.peerDisplayName.flatMap { $0.isEmpty ? nil : $0 }
            self = .incoming(id: id, handle: event.peerURI ?? event.param ?? "", callerName: name)
        case "CALL_RINGING", "CALL_PROGRESS":
            guard outgoing else { return nil }
            self = .startedConnecting(id: id)
        case "CALL_ESTABLISHED":
            self = .established(id: id)
        case "CALL_CLOSED":
            let param = event.param ?? ""
            self = .closed(id: id, reason: Self.endedReason(param: param), param: param)
        default:
            return nil
        }
    }

    /// Why a call ended, from `CALL_CLOSED`'s `param`: "Connection reset by peer" (a BYE or CANCEL
    /// from the other side) is the remote ending it; a SIP status (486 Busy Here, 603 Decline,
    /// 404, 408 …) or a socket error (timed out, refused) means the call failed; a CANCEL
    /// saying the call was completed elsewhere is answered elsewhere. Anything else: failed.
    public static func endedReason(param: String) -> CXCallEndedReason {
        let text = param.lowercased()
        if text.contains("completed elsewhere") || text.contains("answered elsewhere") { return .answeredElsewhere }
        if text.contains("declined elsewhere") { return .declinedElsewhere }
        if text.hasPrefix("connection reset by peer") { return .remoteEnded }
        return .failed
    }
}

/// Facts read from the text that `menu`'s commands answer with.
public enum CommandOutput {
    /// The call id in `callstat`'s output (`af=AF_INET id=8c820435bb1acf54`), nil when there is no call.
    public static func callID(fromCallstat text: String) -> String? {
        guard let range = text.firstRange(of: " id=") else { return nil }
        let id = text[range.upperBound...].prefix { !$0.isWhitespace }
        return id.isEmpty ? nil : String(id)
    }

    /// Whether `callstat` shows an incoming call (`direction: Incoming`).
    public static func isIncoming(callstat text: String) -> Bool {
        text.contains("direction: Incoming")
    }

    /// The peer in `callstat`'s output (` peer_uri:   "Bob" <sip:bob@…>`): its URI and display name.
    public static func peer(fromCallstat text: String) -> (uri: String, displayName: String?)? {
        guard let range = text.firstRange(of: "peer_uri:") else { return nil }
        let field = text[range.upperBound...].prefix { $0 != "\n" }.trimmingWhitespace()
        guard let open = field.firstIndex(of: "<"), let close = field[open...].firstIndex(of: ">") else {
            return field.isEmpty ? nil : (field, nil)
        }
        let name = field[..<open].trimming { $0 == "\"" || $0 == " " }
        return (String(field[field.index(after: open)..<close]), name.isEmpty ? nil : name)
    }

    /// One call in `listcalls`' output: `> [line 1]  0:00:05  ESTABLISHED  sip:bob@…`.
    public struct Line: Equatable, Sendable {
        public var number: Int
        /// baresip's state: `INCOMING`, `OUTGOING`, `RINGING`, `EARLY`, `ESTABLISHED`, …
        public var state: String
        public var onHold: Bool
        public var peer: String
    }

    public static func lines(fromListcalls text: String) -> [Line] {
        text.split(separator: "\n").compactMap { row -> Line? in
            guard let open = row.firstRange(of: "[line "), let close = row[open.upperBound...].firstIndex(of: "]"),
                  let number = Int(row[open.upperBound..<close]) else { return nil }
            let fields = row[row.index(after: close)...].split(separator: " ")
            // Duration, state, optionally "(on hold)", then the peer.
            guard fields.count >= 3 else { return nil }
            return Line(number: number, state: String(fields[1]), onHold: row.contains("(on hold)"), peer: String(fields[fields.count - 1]))
        }
    }

    /// Whether `mute`'s reply says the call is now muted ("call muted") rather than unmuted.
    public static func isMuted(fromMuteReply text: String) -> Bool? {
        let text = text.lowercased()
        if text.contains("unmuted") || text.contains("un-muted") { return false }
        if text.contains("muted") { return true }
        return nil
    }
}
