import FoundationEssentials
import ScreenText

/// The user's SIP account as given on the command line: `sip:alice@example.org`
/// or `"Alice" <sip:alice@example.org>`, optionally followed by baresip account
/// parameters (`;regint=0;outbound="sip:proxy.example.org"`).
public struct SIPAccount: Equatable, Sendable {
    /// The display name, when the account gave one.
    public let displayName: String?
    /// The address of record: `sip:alice@example.org`.
    public let uri: String
    /// baresip parameters after the address, with their leading `;` (may be empty).
    public let parameters: String

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ text: String) throws {
        var rest = Substring(text.trimmingWhitespace())
        var name: String?
        if rest.hasPrefix("\"") {
            guard let close = rest.dropFirst().firstIndex(of: "\"") else {
                throw Invalid(description: "the account's display name has no closing quote: \(text)")
            }
            name = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
        }
        let address: Substring
        if rest.hasPrefix("<") {
            guard let close = rest.firstIndex(of: ">") else { throw Invalid(description: "the account's address has no closing '>': \(text)") }
            address = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
        } else {
            address = rest.prefix { $0 != ";" }
            rest = rest[address.endIndex...]
        }
        let lowered = address.lowercased()
        guard lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:"), address.contains("@"),
              !address.contains(" ") else {
            throw Invalid(description: "the account must be a SIP address such as sip:alice@example.org or \"Alice\" <sip:alice@example.org>, got \(text)")
        }
        displayName = name.flatMap { $0.isEmpty ? nil : $0 }
        uri = String(address)
        parameters = String(rest)
        if parameters.contains("auth_pass") {
            throw Invalid(description: "give the password with --password-file, not in the account")
        }
    }

    /// The domain of the address (host and port): `example.org`.
    public var domain: String {
        let afterAt = uri.split(separator: "@", maxSplits: 1).last ?? ""
        return String(afterAt.prefix { $0 != ";" && $0 != ">" })
    }

    /// The SIP URI to dial for a handle: SIP URIs as they are, `user@host` with `sip:`,
    /// and anything else (a phone number, a user name) as `sip:HANDLE@DOMAIN` of the account.
    public func dialURI(for handle: String) -> String {
        Self.dialURI(for: handle, domain: domain)
    }

    public static func dialURI(for handle: String, domain: String?) -> String {
        let handle = handle.trimmingWhitespace()
        let lowered = handle.lowercased()
        if lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:") { return handle }
        if handle.contains("@") { return "sip:" + handle }
        // Phone numbers lose their spacing and punctuation, keep a leading +.
        let isPhoneNumber = handle.allSatisfy { "+0123456789 -().".contains($0) } && handle.contains(where: \.isNumber)
        let user = isPhoneNumber ? handle.filter { $0.isNumber || $0 == "+" } : handle
        guard let domain, !domain.isEmpty else { return "sip:" + user }
        return "sip:\(user)@\(domain)"
    }

    /// The line of baresip's `accounts` file for this account: answered manually, so that
    /// baresip announces every call (`auto` and `early` suppress `CALL_INCOMING`).
    public func accountsLine(password: String?) -> String {
        var line = displayName.map { "\"\($0.replacing("\"", with: ""))\" " } ?? ""
        line += "<\(uri)>\(parameters)"
        if let password, !password.isEmpty { line += ";auth_pass=\(password)" }
        if !parameters.contains("answermode=") { line += ";answermode=manual" }
        return line
    }
}
