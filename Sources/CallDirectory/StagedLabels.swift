import Glibc

/// The label bytes of an open update, one label after another.
///
/// Without a folder they stay in memory. With one (the updates of a store) they are staged in an
/// unlinked file in it, written a MB at a time on the store's lane: an update waiting for more
/// batches, for its `Complete` or for its turn holds at most a MB of its labels in memory, not a
/// copy of up to 64 MiB, and three apps' updates at once hold nothing like 192 MiB. The page cache
/// keeps the bytes (reclaimable, written back only under pressure; the file is never linked, so a
/// crash leaves nothing behind); `bytes()` maps them to apply them. Should the file fail (a full
/// disk), the bytes go back to memory and the update goes on as it would have without a folder.
///
/// Used on its update's lane only, or by its owner when the update has no lane: not `Sendable`;
/// the update hands it to its lane in an `UncheckedSendable` (`DirectoryUpdate.onLane`).
final class StagedLabels {
    /// Where the bytes are staged; nil: in memory.
    private var folder: String?
    /// In memory: all the bytes. Staged: those not written yet (less than `chunk`).
    private var column = Column<UInt8>()
    private var fd: Int32 = -1
    /// Bytes in the file.
    private var written = 0
    /// The file mapped by `bytes()`, until it is taken or closed.
    private var mapping: (base: UnsafeMutableRawPointer, length: Int)?
    /// The bytes are lost (the file could be neither written nor read back): applying fails with it.
    private(set) var failure: DirectoryError?

    /// What is written at a time (and the most kept in memory while staging).
    static let chunk = 1 << 20

    init(folder: String?) { self.folder = folder }

    deinit { close() }

    /// All the bytes appended, staged or not.
    var count: Int { written + column.count }

    /// Whether the bytes are staged in a file (for tests).
    var isStaged: Bool { fd >= 0 }

    /// Appends each label's UTF-8 bytes, giving way now and then (`Pacer`).
    func append(_ labels: [String]) {
        guard failure == nil else { return }
        var pacer = Pacer()
        // The column held in a local for the loop: read through `self` for each label, it was retained
        // and released each time (callgrind: 8.0M of 413M instructions loading 400,000 entries, 2 %).
        var column = self.column
        for label in labels {
            var label = label
            label.withUTF8 { column.append(contentsOf: $0) }
            if folder != nil, column.count >= Self.chunk {
                flush()
                column = self.column
            }
            pacer.step()
        }
    }

    /// Drops every byte.
    func removeAll() {
        close()
        failure = nil
    }

    /// All the bytes, contiguous (staged ones mapped from their file), until the next change.
    func bytes() throws(DirectoryError) -> UnsafeBufferPointer<UInt8> {
        if let failure { throw failure }
        if folder != nil, fd >= 0 { flush() }
        if let failure { throw failure }
        guard fd >= 0 else { return column.buffer }
        if mapping == nil, written > 0 {
            guard let base = mmap(nil, written, PROT_READ, MAP_SHARED, fd, 0), base != MAP_FAILED else {
                fallBackToMemory(because: "Cannot map the staged labels: \(errorText())")
                if let failure { throw failure }
                return column.buffer
            }
            mapping = (base, written)
        }
        return UnsafeBufferPointer(start: mapping?.base.assumingMemoryBound(to: UInt8.self), count: written)
    }

    /// Hands the bytes over (after `bytes()`): malloc'd memory (`mapped` false) to free, or a
    /// mapping to unmap, of `count` bytes. Nothing is left here.
    func take() throws(DirectoryError) -> (pointer: UnsafeMutablePointer<UInt8>?, count: Int, mapped: Bool) {
        let buffer = try bytes()
        if let mapping {
            self.mapping = nil
            closeFile()
            return (mapping.base.assumingMemoryBound(to: UInt8.self), buffer.count, true)
        }
        let count = column.count
        return (column.take(), count, false)
    }

    /// Frees the memory, unmaps and closes the file (its blocks go with it: it was never linked).
    func close() {
        if let mapping { unmapGently(mapping.base, mapping.length) }
        mapping = nil
        closeFile()
        column.removeAll()
    }

    // MARK: - The file

    private func closeFile() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        written = 0
    }

    /// Writes what is in memory to the file (opened on the first write).
    private func flush() {
        guard let folder, column.count > 0 else { return }
        if fd < 0 {
            fd = Self.openUnlinked(in: folder)
            guard fd >= 0 else { return fallBackToMemory(because: "Cannot stage labels in \(folder): \(errorText())") }
        }
        let pending = column.buffer
        var offset = 0
        while offset < pending.count {
            let n = pwrite(fd, pending.baseAddress! + offset, pending.count - offset, off_t(written + offset))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return fallBackToMemory(because: "Cannot stage labels in \(folder): \(errorText())") }
            offset += n
        }
        written += pending.count
        column.clear()
        sched_yield()
    }

    /// The file failed: its bytes are read back into memory, before those not written yet, and the
    /// update goes on in memory. If they cannot be read back they are lost: `failure`.
    private func fallBackToMemory(because problem: String) {
        if let mapping { unmapGently(mapping.base, mapping.length) }
        mapping = nil
        let memory = Column<UInt8>(capacity: written + column.count)
        var done = 0
        while done < written {
            let n = pread(fd, memory.base! + done, written - done, off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                failure = .storageFailed("\(problem); the \(written) bytes of labels staged so far cannot be read back: \(errorText())")
                closeFile()
                column.removeAll()
                folder = nil
                return
            }
            done += n
        }
        memory.didAppend(written)
        memory.append(contentsOf: column.buffer)
        column = memory
        closeFile()
        folder = nil
    }

    /// A file of our own in `folder` that no other process can open and no crash leaves behind:
    /// `O_TMPFILE`, or, where the file system has none, a file unlinked as soon as it is made.
    static func openUnlinked(in folder: String) -> Int32 {
        let fd = open(folder, temporaryFileFlag | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        let path = "\(folder)/.staged-labels.\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let named = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if named >= 0 { unlink(path) }
        return named
    }

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Swift does not import.
    private static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY
}
