import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Made-up contacts for benches and tests: contact `n` is "Contact n" with the number
/// +44 7700 000000 + n (`number(n)`).
public enum SampleContacts {
    public static func number(_ n: Int) -> Int64 { 447_700_000_000 + Int64(n) }

    /// `count` files, one card each, as KPeople and vdirsyncer keep them.
    public static func writeVCards(count: Int, to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for n in 0..<count {
            let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:sample-\(n)\r\nFN:Contact \(n)\r\nN:\(n);Contact;;;\r\nTEL;TYPE=CELL:+\(number(n))\r\nEND:VCARD\r\n"
            // open/write/close: Foundation's Data.write costs several times as much per small file.
            let fd = open(folder + "/sample-\(n).vcf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
            defer { close(fd) }
            let written = card.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
            guard written == card.utf8.count else { throw CocoaError(.fileWriteUnknown) }
        }
    }
}
