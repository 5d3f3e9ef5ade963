import BoundedFile
import DBusTestSupport
import Foundation
import Glibc
import Testing

/// Files read whole with a bound, without blocking: what the daemon reads from /proc and from
/// places another program can write.
@Suite("Bounded file reads")
struct BoundedFileTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a regular file is read up to its limit; one byte more is tooLarge, not cut")
    func limits() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/file"
        try Data(repeating: 7, count: 40_000).write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path, limit: 40_000).count == 40_000)
        #expect(throws: BoundedFile.Failure(path: path, reason: .tooLarge(limit: 39_999))) { try BoundedFile.read(path, limit: 39_999) }
        // /proc files say size 0: their limit holds as they are read.
        #expect(try BoundedFile.read("/proc/self/stat", limit: 4096).count > 20)
        #expect(throws: BoundedFile.Failure(path: "/proc/self/stat", reason: .tooLarge(limit: 8))) { try BoundedFile.read("/proc/self/stat", limit: 8) }
    }

    @Test("a FIFO, a device and a folder are refused at once, never waited on; a missing file names its errno")
    func notRegular() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/evil-fifo.oga"
        #expect(mkfifo(fifo, 0o600) == 0)
        let started = ContinuousClock.now
        #expect(throws: BoundedFile.Failure(path: fifo, reason: .notRegularFile)) { try BoundedFile.read(fifo, limit: 4096) }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(throws: BoundedFile.Failure(path: "/dev/zero", reason: .notRegularFile)) { try BoundedFile.read("/dev/zero", limit: 4096) }
        #expect(throws: BoundedFile.Failure(path: folder, reason: .notRegularFile)) { try BoundedFile.read(folder, limit: 4096) }
        #expect(throws: BoundedFile.Failure(path: folder + "/none", reason: .system(ENOENT))) { try BoundedFile.read(folder + "/none", limit: 4096) }
        #expect(BoundedFile.text(fifo, limit: 4096) == nil)
    }

    @Test("followLinks false refuses a symbolic link")
    func links() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/target"))
        #expect(symlink(folder + "/target", folder + "/link") == 0)
        #expect(BoundedFile.text(folder + "/link", limit: 16) == "x")
        #expect(throws: BoundedFile.Failure(path: folder + "/link", reason: .system(ELOOP))) { try BoundedFile.read(folder + "/link", limit: 16, followLinks: false) }
    }
}
