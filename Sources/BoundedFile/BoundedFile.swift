import Glibc

/// A file read whole by `read(2)`, with a bound and without blocking: `/proc` entries, and files
/// that another program may have put in place (an app's desktop file, a ringtone).
///
/// Why not `String(contentsOfFile:)` or `Data(contentsOf:)`: FoundationEssentials' reader leaks
/// about 4 KiB on each failed read (measured: `/proc/PID/attr/current` fails with EINVAL on every
/// kernel without a security module, and the daemon read it for every caller, issue 53); it reads
/// whatever size the file has; and opened without O_NONBLOCK, a FIFO put in a file's place stalls
/// the reading thread until someone opens the other end.
///
/// Here the file is opened with O_NONBLOCK (a FIFO or a device opens at once), checked with
/// `fstat` on the descriptor itself (what was opened is what was checked: renaming another file
/// into place afterwards changes nothing), and read to at most `limit` bytes.
public enum BoundedFile {
    /// Why a file was not read.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public enum Reason: Equatable, Sendable {
            /// `open`, `fstat` or `read` failed with this errno.
            case system(Int32)
            /// A FIFO, a socket, a device or a folder.
            case notRegularFile
            /// More than the limit.
            case tooLarge(limit: Int)
        }

        public let path: String
        public let reason: Reason

        public init(path: String, reason: Reason) {
            self.path = path
            self.reason = reason
        }

        public var description: String {
            switch reason {
            case .system(let code): "\(path): \(String(cString: strerror(code)))"
            case .notRegularFile: "\(path) is not a regular file"
            case .tooLarge(let limit): "\(path) is larger than \(limit) bytes"
            }
        }
    }

    /// Opens `path` (relative to the folder `directory`, else to the working folder) for reading:
    /// O_RDONLY | O_CLOEXEC | O_NONBLOCK, and O_NOFOLLOW when `followLinks` is false. The
    /// descriptor is returned only for a regular file whose size (`fstat`'s) is at most `limit`;
    /// the caller closes it.
    public static func open(_ path: String, relativeTo directory: Int32 = AT_FDCWD, limit: Int, followLinks: Bool = true) throws(Failure) -> Int32 {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followLinks ? 0 : O_NOFOLLOW)
        let fd = openat(directory, path, flags)
        guard fd >= 0 else { throw Failure(path: path, reason: .system(errno)) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw Failure(path: path, reason: .system(code))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Failure(path: path, reason: .notRegularFile)
        }
        guard status.st_size <= limit else {
            close(fd)
            throw Failure(path: path, reason: .tooLarge(limit: limit))
        }
        return fd
    }

    /// The bytes of `path`, a regular file of at most `limit` bytes (`/proc` files, whose size
    /// `fstat` gives as 0, are held to `limit` as they are read).
    public static func read(_ path: String, relativeTo directory: Int32 = AT_FDCWD, limit: Int, followLinks: Bool = true) throws(Failure) -> [UInt8] {
        let fd = try open(path, relativeTo: directory, limit: limit, followLinks: followLinks)
        defer { close(fd) }
        return try read(fd, path: path, limit: limit)
    }

    /// The text of `path` (invalid UTF-8 repaired), or nil when it cannot be read within `limit`.
    public static func text(_ path: String, relativeTo directory: Int32 = AT_FDCWD, limit: Int, followLinks: Bool = true) -> String? {
        guard let bytes = try? read(path, relativeTo: directory, limit: limit, followLinks: followLinks) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads the open descriptor `fd` from where it stands to its end: at most `limit` bytes.
    public static func read(_ fd: Int32, path: String, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        // One read more than the limit tells a file of exactly `limit` bytes from a longer one.
        var chunk = [UInt8](repeating: 0, count: min(limit + 1, 16 << 10))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, limit + 1 - bytes.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, reason: .system(errno))
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { throw Failure(path: path, reason: .tooLarge(limit: limit)) }
        }
    }
}
