import Foundation

/// Writes a script a test's programs will run, through a descriptor that is close-on-exec.
/// Foundation's writes are not: a child the test process forks meanwhile (for another test)
/// would keep the file open for writing, and running the script would then fail with "Text
/// file busy" (ETXTBSY) for as long as that child lives.
public func writeExecutable(_ text: String, to url: URL) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw TestSupportError("cannot write \(url.path): errno \(errno)") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { throw TestSupportError("cannot write \(url.path): errno \(errno)") }
        written += count
    }
}
