/// The release of MonkeyCall: one version for `monkeycall --version` and `monkeycalld --version`.
/// (`Telephony1.version` is the D-Bus API's version, which changes only with the contract.)
public enum Release {
    public static let version = "0.1.0"

    /// What `--version` prints: `monkeycall 0.1.0 (D-Bus API org.monkeycall.Telephony1 1.0)`.
    public static func description(of program: String) -> String {
        "\(program) \(version) (D-Bus API \(Telephony1.busName) \(Telephony1.version))"
    }
}
