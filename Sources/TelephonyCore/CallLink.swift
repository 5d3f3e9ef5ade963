import FoundationEssentials
import ScreenText

/// A link that starts a call: `monkeycall://HANDLE`, `monkeycall:HANDLE`
/// (optionally `?video=1`), or an RFC 3966 `tel:` number.
public struct CallLink: Equatable, Sendable {
    public var scheme: String
    public var handle: Handle
    public var video: Bool

    public static let maximumLength = 2048
    /// Schemes that many apps take: declaring one claims nothing (no app may hold the user's
    /// phone links by registering first); they go to the app the user chose, else the user is asked.
    public static let sharedSchemes: Set<String> = ["tel", "sip", "sips", "callto"]

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), noScheme, unsupportedScheme(String), malformedEncoding, controlCharacter, emptyHandle, invalidNumber(String)

        public var description: String {
            switch self {
            case .tooLong(let length): "the link is \(length) bytes long; links are at most \(CallLink.maximumLength)"
            case .noScheme: "the link has no scheme: expected monkeycall:, tel:, sip:, sips: or callto:"
            case .unsupportedScheme(let scheme): "'\(scheme.prefix(32)):' links do not start calls: expected monkeycall:, tel:, sip:, sips: or callto:"
            case .malformedEncoding: "the link has malformed percent-encoding"
            case .controlCharacter: "the link contains control or bidirectional formatting characters"
            case .emptyHandle: "the link names nobody to call"
            case .invalidNumber(let number): "'\(number.prefix(64))' is not a telephone number"
            }
        }
    }

    public init(scheme: String, handle: Handle, video: Bool = false) {
        self.scheme = scheme
        self.handle = handle
        self.video = video
    }

    public init(parsing text: String) throws(ParseError) {
        guard text.utf8.count <= Self.maximumLength else { throw .tooLong(text.utf8.count) }
        guard ScreenText.handleHazard(in: text) == nil else { throw .controlCharacter }
        guard let colon = text.firstIndex(of: ":") else { throw .noScheme }
        let scheme = text[..<colon].lowercased()
        var rest = Substring(text[text.index(after: colon)...])
        switch scheme {
        case "monkeycall":
            if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            // An empty host, as in file:///: `monkeycall:///alice` calls alice, not "/alice".
            while rest.hasPrefix("/") { rest = rest.dropFirst() }
            var query: Substring = ""
            if let mark = rest.firstIndex(of: "?") {
                query = rest[rest.index(after: mark)...]
                rest = rest[..<mark]
            }
            if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
            while rest.hasSuffix("/") { rest = rest.dropLast() }
            let value = try Self.percentDecoded(rest).trimmingWhitespace()
            guard !value.isEmpty else { throw .emptyHandle }
            var video = false
            for parameter in query.split(separator: "&") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, try Self.percentDecoded(pair[0]).lowercased() == "video" else { continue }
                video = ["1", "true", "yes"].contains(try Self.percentDecoded(pair[1]).lowercased())
            }
            self.init(scheme: scheme, handle: Handle(type: Self.guessType(value), value: value), video: video)
        case "tel":
            // RFC 3966: the number comes before any ';parameters'; visual separators are dropped.
            if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            let number = try Self.percentDecoded(rest.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let digits = number.filter { !"-.() ".contains($0) }
            guard !digits.isEmpty else { throw .emptyHandle }
            let body = digits.hasPrefix("+") ? digits.dropFirst() : Substring(digits)
            guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isHexDigit || "*#".contains($0)) }),
                  body.contains(where: { $0.isNumber }) else { throw .invalidNumber(number) }
            self.init(scheme: scheme, handle: Handle(type: .phoneNumber, value: digits))
        case "callto":
            // Skype's and NetMeeting's links, callto:NUMBER or callto://NAME: a number goes as a tel: link
            // would (to the app for phone numbers), a name to the app that declared callto.
            if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            let value = try Self.percentDecoded(rest.split(whereSeparator: { "?#".contains($0) }).first ?? "").trimmingWhitespace()
            guard !value.isEmpty else { throw .emptyHandle }
            if value.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.() ".contains($0)) }) {
                try self.init(parsing: "tel:" + value)
                return
            }
            self.init(scheme: scheme, handle: Handle(type: Self.guessType(value), value: value))
        case "sip", "sips":
            // RFC 3261: the URI is the handle (as SIP providers report their callers); `?headers` are dropped.
            let address = try Self.percentDecoded(rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmingWhitespace()
            guard !address.isEmpty, !address.hasPrefix("@") else { throw .emptyHandle }
            self.init(scheme: scheme, handle: Handle(type: .generic, value: "\(scheme):\(address)"))
        case "":
            throw .noScheme
        default:
            throw .unsupportedScheme(scheme)
        }
    }

    /// Percent-decoding that refuses bad escapes, invalid UTF-8, and decoded characters no handle
    /// may hold (controls, bidi controls and marks: `ScreenText.handleHazard`).
    static func percentDecoded(_ text: Substring) throws(ParseError) -> String {
        guard let decoded = ScreenText.percentDecoded(text) else { throw .malformedEncoding }
        guard ScreenText.handleHazard(in: decoded) == nil else { throw .controlCharacter }
        return decoded
    }

    /// A handle that reads as a number is a phone number; one with an `@` an address.
    static func guessType(_ value: String) -> HandleType {
        if value.contains("@") { return .emailAddress }
        let digits = value.filter { !"-.() ".contains($0) }
        let body = digits.hasPrefix("+") ? digits.dropFirst() : Substring(digits)
        if !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isNumber }) { return .phoneNumber }
        return .generic
    }
}
