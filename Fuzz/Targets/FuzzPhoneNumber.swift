// libFuzzer entry: phone-number normalisation and block-list patterns.
// Linked by scripts/fuzz with the CallDirectory module and what it depends on; not part of the package.

@testable import CallDirectory
@testable import PhoneNumber
import ScreenText

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPhoneNumber(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // The first part is a pattern, the rest (after a 0 byte) a handle.
    let split = bytes.firstIndex(of: 0) ?? size
    let pattern = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<split]), as: UTF8.self)
    let handle = String(decoding: UnsafeBufferPointer(rebasing: bytes[min(split + 1, size)...]), as: UTF8.self)
    for text in [pattern, handle] {
        let parsed = PhoneNumber.parse(text)
        // An ASCII handle is read byte by byte (`parseASCII`): the same as the general reading.
        precondition(parsed == PhoneNumber.parseUnicode(text), "parseASCII and parseUnicode disagree")
        let number = PhoneNumber.normalize(text)
        if let number {
            // A directory number is the parsed digits, without leading zeros.
            precondition(parsed?.digits == String(number))
        }
        if let parsed {
            precondition(parsed.digits.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } && !parsed.digits.isEmpty)
            // Reading the key again gives the same key.
            precondition(PhoneNumber.key(parsed.key) == parsed.key)
        }
    }
    if var list = try? BlockList(patterns: [pattern]) {
        _ = list.matches(handle: handle)
        // A pattern matches the handle it was written as, if that is no prefix.
        let written = pattern.trimmingWhitespace()
        if !written.hasSuffix("*") { precondition(list.matches(handle: written)) }
        precondition(list.remove(pattern))
        precondition(list.patterns.isEmpty)
    }
    return 0
}
