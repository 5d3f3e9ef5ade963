import FoundationEssentials

/// Conversions between Swift values and the API's forms.
enum APIValue {
    /// Microseconds since the Unix epoch; nil is 0, "now".
    static func time(_ date: Date?) -> UInt64 {
        guard let date else { return 0 }
        return UInt64(max(0, date.timeIntervalSince1970 * 1_000_000))
    }
}
