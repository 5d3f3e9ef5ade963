// libFuzzer entry: CallLink's URL parser (monkeycall:, tel:, anything else).
// Linked by scripts/fuzz with the TelephonyCore module and what it depends on; not part of the package.

@testable import TelephonyCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCallLink(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let link = try? CallLink(parsing: text) {
        // What it parsed is never empty and never longer than what came in.
        precondition(!link.handle.value.isEmpty)
        precondition(link.handle.value.utf8.count <= text.utf8.count * 3)
    }
    return 0
}
