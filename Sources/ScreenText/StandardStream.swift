#if canImport(Glibc)
import Glibc
#endif

/// Standard output and standard error written at once, unbuffered (as FileHandle wrote them:
/// a prompt shows before the answer is read, a line before the program exits or is killed).
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    /// Writes all of `text`, retrying after a signal; gives up quietly when the reader has gone.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(rawValue, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
