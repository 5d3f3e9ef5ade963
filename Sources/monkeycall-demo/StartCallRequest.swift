import Foundation

/// Reads the handle to call from a `monkeycall:` link (the seed sample's `StartCallRequest`).
enum StartCallRequest {
    static let urlScheme = "monkeycall"

    /// `monkeycall://alice` or `monkeycall:alice` → `alice`; nil for any other link.
    static func callHandle(fromURL url: URL) -> String? {
        guard url.scheme?.lowercased() == urlScheme else { return nil }
        if let host = url.host, !host.isEmpty { return host.removingPercentEncoding ?? host }
        let rest = url.absoluteString.dropFirst(urlScheme.count + 1).split(separator: "?").first.map(String.init) ?? ""
        let handle = rest.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        return handle.isEmpty ? nil : (handle.removingPercentEncoding ?? handle)
    }
}
