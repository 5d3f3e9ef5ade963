import FoundationEssentials
import Glibc

/// A small file replaced whole: written to a temporary file beside it (0600,
/// the user's alone), fsynced, renamed over it, and the folder fsynced. Readers
/// and a crash see the old file or the new one, never a part.
public enum AtomicFile {
    /// Creates the folder (0700) when it is missing.
    public static func write(_ data: Data, to path: String) throws(DirectoryError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storageFailed("Cannot create \(folder): \(errorText(error))")
        }
        let temporary = "\(folder)/.\(URL(fileURLWithPath: path).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storageFailed("Cannot create \(temporary): \(errorText())") }
        var written = 0
        while written < data.count {
            let n = data.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + written, raw.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        let synced = written == data.count && fsync(fd) == 0
        let problem = errorText()
        close(fd)
        guard synced else {
            unlink(temporary)
            throw .storageFailed("Cannot write \(temporary): \(problem)")
        }
        guard rename(temporary, path) == 0 else {
            let text = errorText()
            unlink(temporary)
            throw .storageFailed("Cannot replace \(path): \(text)")
        }
        try DirectoryFile.syncFolder(folder)
    }
}
