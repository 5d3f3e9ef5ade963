import Foundation

/// Writes a script a test's programs will run (see `writeClosingOnExec`: running it would
/// otherwise fail with "Text file busy", ETXTBSY, for as long as such a child lives).
public func writeExecutable(_ text: String, to url: URL) throws {
    try writeClosingOnExec(text, to: url, mode: 0o755)
}

/// Writes a file through a descriptor that is close-on-exec. Foundation's writes are not: a child
/// the test process forks meanwhile (for another test) would keep the file open, and with it the
/// folders above it (a folder deleted meanwhile tells no IN_DELETE_SELF until that child ends).
public func writeClosingOnExec(_ text: String, to url: URL, mode: mode_t = 0o644) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
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
