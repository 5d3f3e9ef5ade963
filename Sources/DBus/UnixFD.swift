import Glibc

/// A unix file descriptor carried in a message. The instance owns the
/// descriptor and closes it when released; sending it makes libdbus send a dup.
public final class UnixFD: Sendable, CustomStringConvertible {
    public let rawValue: Int32

    /// Takes ownership of `rawValue`.
    public init(owning rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Duplicates `rawValue`; the caller keeps its own descriptor.
    public convenience init(duplicating rawValue: Int32) throws(DBusError) {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw DBusError.invalidArgs("cannot duplicate file descriptor \(rawValue): errno \(errno)") }
        self.init(owning: copy)
    }

    deinit { close(rawValue) }

    public var description: String { "fd \(rawValue)" }

    /// Device and inode: two descriptors of the same open file compare equal.
    var identity: (UInt, UInt)? {
        var info = stat()
        guard fstat(rawValue, &info) == 0 else { return nil }
        return (UInt(info.st_dev), UInt(info.st_ino))
    }
}
