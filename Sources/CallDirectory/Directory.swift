import CBoundary
import Dispatch
import Glibc

/// The memory behind a directory: four plain arrays, owned either by the heap
/// (after `applying`) or by a read-only mapping of a directory file (after
/// loading). Immutable once made, so it is shared freely across threads: the pointers are held
/// in an `UncheckedSendable`, written when the storage is made and never after.
final class DirectoryStorage: Sendable {
    enum Owner {
        case none
        /// malloc'd blocks and their sizes in bytes, and mappings (an update's staged labels).
        case heap([(UnsafeMutableRawPointer?, Int)], mapped: [(UnsafeMutableRawPointer, Int)])
        case mapping(UnsafeMutableRawPointer, Int)
    }

    /// The arrays and who owns their memory.
    struct Memory {
        /// Blocking numbers, strictly ascending.
        let blocking: UnsafeBufferPointer<Int64>
        /// Identification numbers, strictly ascending.
        let identification: UnsafeBufferPointer<Int64>
        /// `identification.count + 1` label offsets into `labelBytes`, each `offsetWidth` bytes (4 or 8).
        let labelOffsets: UnsafeRawPointer?
        let labelBytes: UnsafeBufferPointer<UInt8>
        let owner: Owner
    }

    private let memory: UncheckedSendable<Memory>
    var blocking: UnsafeBufferPointer<Int64> { @inline(__always) get { memory.value.blocking } }
    var identification: UnsafeBufferPointer<Int64> { @inline(__always) get { memory.value.identification } }
    var labelOffsets: UnsafeRawPointer? { @inline(__always) get { memory.value.labelOffsets } }
    var labelBytes: UnsafeBufferPointer<UInt8> { @inline(__always) get { memory.value.labelBytes } }
    var owner: Owner { memory.value.owner }
    let offsetWidth: Int
    /// The checksum of the arrays as written in the file, when loaded from one.
    let fileChecksum: UInt64?
    /// The file a mapping was read from, as it was then.
    let source: MappedFile?

    init(
        blocking: UnsafeBufferPointer<Int64>, identification: UnsafeBufferPointer<Int64>,
        labelOffsets: UnsafeRawPointer?, offsetWidth: Int, labelBytes: UnsafeBufferPointer<UInt8>,
        fileChecksum: UInt64? = nil, source: MappedFile? = nil, owner: Owner
    ) {
        memory = UncheckedSendable(Memory(blocking: blocking, identification: identification, labelOffsets: labelOffsets,
                                          labelBytes: labelBytes, owner: owner))
        self.offsetWidth = offsetWidth
        self.fileChecksum = fileChecksum
        self.source = source
    }

    static let empty = DirectoryStorage(
        blocking: .init(start: nil, count: 0), identification: .init(start: nil, count: 0),
        labelOffsets: nil, offsetWidth: 4, labelBytes: .init(start: nil, count: 0), owner: .none)

    deinit {
        switch owner {
        case .none: break
        case .heap(let blocks, let mapped):
            for (block, bytes) in blocks { releaseGently(block, bytes: bytes) }
            MappingRelease.unmap(mapped)
        case .mapping(let base, let length): MappingRelease.unmap([(base, length)], thenClosing: source?.descriptor)
        }
    }

    var isMapped: Bool {
        if case .mapping = owner { return true }
        return false
    }

    /// The label bytes are an update's, still mapped from the file they were staged in.
    var labelsAreStaged: Bool {
        if case .heap(_, let mapped) = owner { return !mapped.isEmpty }
        return false
    }

    @inline(__always)
    func offset(_ index: Int) -> Int {
        guard let offsets = labelOffsets else { return 0 }
        if offsetWidth == 4 {
            return Int(offsets.load(fromByteOffset: index &* 4, as: UInt32.self))
        }
        return Int(truncatingIfNeeded: offsets.load(fromByteOffset: index &* 8, as: UInt64.self))
    }

    /// The label's bytes; empty if a corrupted file's offsets point outside the label bytes.
    @inline(__always)
    func labelRange(_ index: Int) -> Range<Int> {
        let start = offset(index)
        let end = offset(index + 1)
        guard start >= 0, start <= end, end <= labelBytes.count else { return 0..<0 }
        return start..<end
    }

    func label(at index: Int) -> String {
        let range = labelRange(index)
        return String(decoding: UnsafeBufferPointer(rebasing: labelBytes[range]), as: UTF8.self)
    }
}

/// A directory file as it was when it was mapped, and the descriptor it was mapped through, kept
/// open with the mapping (and closed after it, on `MappingRelease`'s queue).
struct MappedFile: Sendable {
    let descriptor: Int32
    /// What `fstat` said of it then.
    let info: stat

    /// The mapped file itself (whatever is at its path now: a save renames a new file over it, and
    /// nobody can open the mapped one any more) has the same size and modification time. One
    /// `fstat` of the descriptor, about 0.4 µs; a `stat` of the path, which it replaces, walked the
    /// whole path (1.2–1.4 µs here, several times that just after a context switch: issue 55).
    var isUnchanged: Bool {
        var now = stat()
        guard fstat(descriptor, &now) == 0 else { return true }
        return now.st_size == info.st_size && now.st_mtim.tv_sec == info.st_mtim.tv_sec && now.st_mtim.tv_nsec == info.st_mtim.tv_nsec
    }
}

/// One provider's applied call directory: blocking numbers and identification
/// numbers with labels, each sorted, looked up by binary search. A value: it
/// never changes; `applying(_:)` makes a new one and leaves this one working.
public struct Directory: Sendable {
    let storage: DirectoryStorage

    init(storage: DirectoryStorage) { self.storage = storage }

    public init() { storage = .empty }

    public static let empty = Directory()

    public var blockingCount: Int { storage.blocking.count }
    public var identificationCount: Int { storage.identification.count }
    /// Blocking and identification entries together (what the maximum counts).
    public var count: Int { blockingCount + identificationCount }
    /// Read from a memory-mapped file (lookups read its pages) rather than the heap.
    public var isMapped: Bool { storage.isMapped }

    /// False when the file this directory is mapped from was truncated or written
    /// in place since it was loaded (by another program: the service only ever
    /// replaces files by renaming a new one over them). Its pages may then be gone,
    /// and reading them would end the process with SIGBUS, or say anything: such a
    /// directory must not be read again. An `fstat` of the mapped file.
    public var isIntact: Bool { storage.source?.isUnchanged ?? true }

    public func isBlocked(_ number: Int64) -> Bool {
        storage.blocking.index(of: number) != nil
    }

    public func label(for number: Int64) -> String? {
        guard let index = storage.identification.index(of: number) else { return nil }
        return storage.label(at: index)
    }

    /// A copy of the blocking numbers (for tests and listings; not for large directories).
    public var blockingEntries: [Int64] { Array(storage.blocking) }

    /// A copy of the identification entries (for tests and listings; not for large directories).
    public var identificationEntries: [(number: Int64, label: String)] {
        storage.identification.indices.map { (storage.identification[$0], storage.label(at: $0)) }
    }

    // MARK: - Applying an update

    /// The directory after `update`: a complete update replaces everything, an
    /// incremental one merges its removals and additions in one linear pass.
    /// Atomic: on an error this directory is unchanged and keeps answering.
    /// The update is finished either way, as CallKit fails the whole request:
    /// its memory is moved into the result or freed.
    public func applying(_ update: DirectoryUpdate) throws(DirectoryError) -> Directory {
        try applying(update, wideOffsets: false)
    }

    /// `wideOffsets` forces 8-byte label offsets (otherwise used only past 4 GiB of labels), for tests.
    ///
    /// An update of a store is applied on the store's lane, after the label bytes of every batch
    /// taken before (the caller waits: never the service's executor).
    func applying(_ update: DirectoryUpdate, wideOffsets: Bool) throws(DirectoryError) -> Directory {
        if let lane = update.lane, !lane.isCurrent {
            return try lane.sync { () throws(DirectoryError) in try applying(update, wideOffsets: wideOffsets) }
        }
        try update.checkOpen()
        let addedLabels: UnsafeBufferPointer<UInt8>
        do {
            addedLabels = try update.labels.bytes()
        } catch {
            update.finish()
            throw error
        }
        let replacesAll = update.kind == .complete
        let old = storage
        let blocking = Self.mergeBlocking(
            old: replacesAll || update.removesAllBlocking ? .init(start: nil, count: 0) : old.blocking,
            update: update)
        let oldIdentification = replacesAll || update.removesAllIdentification ? DirectoryStorage.empty : old
        let identification: BuiltIdentification
        if !wideOffsets, oldIdentification.labelBytes.count + addedLabels.count < Int(UInt32.max) {
            identification = Self.mergeIdentification(UInt32.self, old: oldIdentification, update: update, addedBytes: addedLabels)
        } else {
            identification = Self.mergeIdentification(UInt64.self, old: oldIdentification, update: update, addedBytes: addedLabels)
        }
        let total = blocking.count + identification.count
        // Checked on the merged result: an update that removes labels while it adds is not refused
        // for what it removes. The merge's peak is bounded by the old labels and the update's.
        guard total <= update.maximumEntries, identification.byteCount <= update.maximumDirectoryLabelBytes else {
            releaseGently(blocking.numbers, count: blocking.count)
            identification.free()
            update.finish()
            if total > update.maximumEntries {
                throw .maximumEntriesExceeded("The directory would hold \(total) entries; a provider may have at most \(update.maximumEntries).")
            }
            throw .maximumEntriesExceeded("The directory would hold \(identification.byteCount) bytes of labels; a provider's directory may hold at most "
                + "\(update.maximumDirectoryLabelBytes >> 20) MiB of labels.")
        }
        update.finish()
        return Directory(storage: DirectoryStorage(
            blocking: .init(start: blocking.numbers, count: blocking.count),
            identification: .init(start: identification.numbers, count: identification.count),
            labelOffsets: UnsafeRawPointer(identification.offsets), offsetWidth: identification.offsetWidth,
            labelBytes: .init(start: identification.bytes, count: identification.byteCount),
            owner: .heap([
                (UnsafeMutableRawPointer(blocking.numbers), blocking.count * 8),
                (UnsafeMutableRawPointer(identification.numbers), identification.count * 8),
                (identification.offsets, (identification.count + 1) * identification.offsetWidth),
            ] + (identification.bytesMapped ? [] : [(UnsafeMutableRawPointer(identification.bytes), identification.byteCount)]),
            mapped: identification.bytesMapped ? [(UnsafeMutableRawPointer(identification.bytes!), identification.byteCount)] : [])))
    }

    private static func mergeBlocking(
        old: UnsafeBufferPointer<Int64>, update: DirectoryUpdate
    ) -> (numbers: UnsafeMutablePointer<Int64>?, count: Int) {
        let additions = update.blockingAdditions
        if old.isEmpty, update.cancelledBlocking.count == 0 {
            let count = additions.count
            return (additions.take(), count) // Nothing to merge: the update's memory becomes the directory's.
        }
        let adds = additions.buffer
        let out = allocate(Int64.self, old.count + adds.count)
        var n = 0
        var walk = MergeWalk(old: old, removals: update.blockingRemovals.buffer, additions: adds, cancelled: update.cancelledBlocking)
        while let step = walk.next() {
            switch step {
            case .cancelledAddition: continue
            case .addition(let a): out[n] = adds[a]
            case .old(let i): out[n] = old[i]
            }
            n += 1
        }
        return (shrink(out, to: n), n)
    }

    struct BuiltIdentification {
        var numbers: UnsafeMutablePointer<Int64>?
        var count: Int
        var offsets: UnsafeMutableRawPointer?
        var offsetWidth: Int
        var bytes: UnsafeMutablePointer<UInt8>?
        var byteCount: Int
        /// `bytes` are an update's staged labels, mapped (unmapped, not freed).
        var bytesMapped = false

        func free() {
            releaseGently(numbers, count: count)
            releaseGently(offsets, bytes: (count + 1) * offsetWidth)
            if bytesMapped, let bytes {
                unmapGently(UnsafeMutableRawPointer(bytes), byteCount)
            } else {
                releaseGently(bytes, count: byteCount)
            }
        }
    }

    private static func mergeIdentification<Offset: FixedWidthInteger & UnsignedInteger & BitwiseCopyable>(
        _: Offset.Type, old: DirectoryStorage, update: DirectoryUpdate, addedBytes: UnsafeBufferPointer<UInt8>
    ) -> BuiltIdentification {
        let adds = update.identificationAdditions.buffer
        let lengths = update.labelLengths.buffer
        if old.identification.isEmpty, update.cancelledIdentification.count == 0 {
            // Nothing to merge: the update's numbers and label bytes become the directory's.
            let offsets = allocate(Offset.self, adds.count + 1)
            offsets[0] = 0
            var end = 0
            var pacer = Pacer()
            for index in 0..<lengths.count {
                end += Int(lengths[index])
                offsets[index + 1] = Offset(end)
                pacer.step()
            }
            let count = adds.count
            // `bytes()` succeeded for these very bytes: taking them cannot fail.
            let taken = (try? update.labels.take()) ?? (pointer: nil, count: 0, mapped: false)
            return BuiltIdentification(
                numbers: update.identificationAdditions.take(), count: count,
                offsets: UnsafeMutableRawPointer(offsets), offsetWidth: MemoryLayout<Offset>.size,
                bytes: taken.pointer, byteCount: taken.count, bytesMapped: taken.mapped)
        }
        let oldNumbers = old.identification
        let oldBytes = old.labelBytes
        let numbers = allocate(Int64.self, oldNumbers.count + adds.count)
        let offsets = allocate(Offset.self, oldNumbers.count + adds.count + 1)
        let bytes = allocate(UInt8.self, oldBytes.count + addedBytes.count)
        offsets[0] = 0
        var n = 0, end = 0, cursor = 0
        var walk = MergeWalk(old: oldNumbers, removals: update.identificationRemovals.buffer, additions: adds,
                             cancelled: update.cancelledIdentification)
        while let step = walk.next() {
            switch step {
            case .cancelledAddition(let a):
                cursor += Int(lengths[a])
                continue
            case .addition(let a):
                let length = Int(lengths[a])
                if length > 0 { (bytes + end).update(from: addedBytes.baseAddress! + cursor, count: length) }
                numbers[n] = adds[a]
                cursor += length
                end += length
            case .old(let i):
                let range = old.labelRange(i)
                if !range.isEmpty { (bytes + end).update(from: oldBytes.baseAddress! + range.lowerBound, count: range.count) }
                numbers[n] = oldNumbers[i]
                end += range.count
            }
            n += 1
            offsets[n] = Offset(end)
        }
        return BuiltIdentification(
            numbers: shrink(numbers, to: n), count: n,
            offsets: UnsafeMutableRawPointer(shrink(offsets, to: n + 1)), offsetWidth: MemoryLayout<Offset>.size,
            bytes: shrink(bytes, to: end), byteCount: end)
    }
}

/// The pass both merges make, in ascending order: a kind's old numbers less the update's
/// removals, with the update's additions in among them; an addition replaces an old entry of the
/// same number, and each cancelled addition is stepped over. Plain pointers and counters, inlined
/// into each merge: the pass runs at memory speed.
struct MergeWalk {
    enum Step {
        /// The addition at this index was cancelled by a later removal: it is not in the result.
        case cancelledAddition(Int)
        /// The addition at this index comes next.
        case addition(Int)
        /// The old entry at this index comes next.
        case old(Int)
    }

    private let old: UnsafeBufferPointer<Int64>
    private let removals: UnsafeBufferPointer<Int64>
    private let additions: UnsafeBufferPointer<Int64>
    /// Ascending (DirectoryUpdate keeps them so).
    private let cancelled: UnsafeBufferPointer<Int>
    private var i = 0, r = 0, a = 0, c = 0
    private var pacer = Pacer()

    init(old: UnsafeBufferPointer<Int64>, removals: UnsafeBufferPointer<Int64>, additions: UnsafeBufferPointer<Int64>, cancelled: Column<Int>) {
        self.old = old
        self.removals = removals
        self.additions = additions
        self.cancelled = cancelled.buffer
    }

    @inline(__always)
    mutating func next() -> Step? {
        while true {
            pacer.step()
            if a < additions.count, c < cancelled.count, cancelled[c] == a {
                a += 1; c += 1
                return .cancelledAddition(a - 1)
            }
            if i < old.count {
                let number = old[i]
                while r < removals.count, removals[r] < number { r += 1 }
                if r < removals.count, removals[r] == number {
                    i += 1
                    continue
                }
                if a < additions.count, additions[a] <= number {
                    if additions[a] == number { i += 1 }
                    a += 1
                    return .addition(a - 1)
                }
                i += 1
                return .old(i - 1)
            } else if a < additions.count {
                a += 1
                return .addition(a - 1)
            } else {
                return nil
            }
        }
    }
}

/// Memory for `count` values, to be freed with `free`.
func allocate<T: BitwiseCopyable>(_: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
    let bytes = Swift.max(count * MemoryLayout<T>.stride, 1)
    guard let memory = malloc(bytes) else { fatalError("CallDirectory: out of memory allocating \(bytes) bytes") }
    return memory.bindMemory(to: T.self, capacity: Swift.max(count, 1))
}

/// Gives back the unused end of an allocation.
func shrink<T: BitwiseCopyable>(_ pointer: UnsafeMutablePointer<T>, to count: Int) -> UnsafeMutablePointer<T> {
    let bytes = Swift.max(count * MemoryLayout<T>.stride, 1)
    guard let memory = realloc(pointer, bytes) else { return pointer }
    return memory.bindMemory(to: T.self, capacity: Swift.max(count, 1))
}

/// Where the mappings of directory files (and of an update's staged labels) are let go of, one after
/// another, whichever thread lets their directory go: the service queue, at times, when it swaps a
/// new directory in and the save's queue has already dropped its reference. The last unmapping of a
/// file that nobody can open any more (one a save replaced, or staged labels) frees the file: its
/// page cache, and its blocks, which ext4 without a journal discards on the disk at once. That took
/// 15–30 ms for a 139 MB directory, and a Get on the service queue waited it out in one run of
/// `monkeycall-bench --queue` in three.
enum MappingRelease {
    static let queue = DispatchQueue(label: "org.monkeycall.directory.release", qos: .utility)

    /// Unmaps `mappings`, then closes `descriptor` (the file they were mapped from), on the queue.
    static func unmap(_ mappings: [(UnsafeMutableRawPointer, Int)], thenClosing descriptor: Int32? = nil) {
        guard !mappings.isEmpty || descriptor != nil else { return }
        let mappings = UncheckedSendable(mappings)
        queue.async {
            for (base, length) in mappings.value { unmapGently(base, length) }
            if let descriptor { close(descriptor) }
        }
    }
}
