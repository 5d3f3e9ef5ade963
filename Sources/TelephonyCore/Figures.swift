/// Rates and waits written in error messages, as `%g` and `%.2f` would (FoundationEssentials has
/// no `String(format:)`): `5`, `0.5`; `0.25`, `1.00`.
enum Figures {
    /// The shortest form: no `.0` on a whole number.
    static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// Two decimals, rounded.
    static func twoDecimals(_ value: Double) -> String {
        let hundredths = Int64((abs(value) * 100).rounded())
        let cents = hundredths % 100
        return "\(value < 0 && hundredths > 0 ? "-" : "")\(hundredths / 100).\(cents < 10 ? "0" : "")\(cents)"
    }
}
