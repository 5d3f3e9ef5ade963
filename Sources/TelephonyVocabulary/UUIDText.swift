import FoundationEssentials

// A call's and an action's UUID as the contract writes them: 8-4-4-4-12 hexadecimal digits,
// accepted in either case, always sent in lower case. Here, beside the other words every layer
// shares, so that the core's messages, the service and MonkeyCallAPI's typed arguments read and
// write them alike.

extension UUID {
    /// The UUID in the API's form: 8-4-4-4-12, lower case. Written from the bytes: Foundation's
    /// `uuidString` goes through `snprintf`, and every call's path and every signal about it names
    /// its UUID (some 300,000 instructions a call's life, 3.7 % of the daemon's, issue 55).
    public var apiString: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                digits.withUTF8Buffer { hex in
                    var at = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            text[at] = UInt8(ascii: "-")
                            at += 1
                        }
                        text[at] = hex[Int(byte >> 4)]
                        text[at + 1] = hex[Int(byte & 0x0f)]
                        at += 2
                    }
                }
                return 36
            }
        }
    }

    /// Reads 8-4-4-4-12 hexadecimal digits in either letter case, as `UUID(uuidString:)` does,
    /// without its `sscanf`: some 8,000 instructions a UUID, and every report, action and answer
    /// names one or two (1 % of the daemon's instructions in a call's life, issue 55).
    public init?(apiString text: String) {
        var text = text
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = text.withUTF8 { utf8 in
            guard utf8.count == 36 else { return false }
            return withUnsafeMutableBytes(of: &value) { bytes in
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[at] == UInt8(ascii: "-") else { return false }
                        at += 1
                    }
                    guard let high = hexValue(utf8[at]), let low = hexValue(utf8[at + 1]) else { return false }
                    bytes[index] = high << 4 | low
                    at += 2
                }
                return true
            }
        }
        guard parsed else { return nil }
        self.init(uuid: value)
    }
}

/// The value of a hexadecimal digit in either case: `| 0x20` folds "A"–"F" to "a"–"f" and leaves
/// the digits as they are.
private func hexValue(_ byte: UInt8) -> UInt8? {
    let folded = byte | 0x20
    if folded >= UInt8(ascii: "0") && folded <= UInt8(ascii: "9") && byte == folded { return folded - UInt8(ascii: "0") }
    if folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "f") { return folded - UInt8(ascii: "a") + 10 }
    return nil
}
