import FoundationEssentials
import Glibc

/// The directory file: ready without parsing. A 128-byte header of sixteen
/// little-endian UInt64 words, then, each at an 8-byte aligned offset:
/// the provider name (UTF-8), the blocking numbers (Int64), the identification
/// numbers (Int64), `identificationCount + 1` label offsets (UInt32, or UInt64
/// when the labels pass 4 GiB) and the label bytes. Loading maps the file
/// read-only and checks the header (magic, version, checksum, counts, offsets,
/// size) in O(1); lookups then binary-search the mapped pages.
///
/// Header words: 0 magic · 1 version · 2 offset width · 3 name length ·
/// 4 blocking count · 5 identification count · 6 label byte count ·
/// 7 name offset · 8 blocking offset · 9 identification offset ·
/// 10 label offsets offset · 11 label bytes offset · 12 file size ·
/// 13 checksum of the sections · 14 reserved (0) · 15 checksum of words 0–14.
enum DirectoryFile {
    /// "MKCALDIR" as bytes in the file.
    static let magic: UInt64 = 0x5249_444C_4143_4B4D
    static let version: UInt64 = 1
    static let headerWords = 16
    static let headerSize = headerWords * 8
    static let fileExtension = ".mcdir"

    struct Layout: Equatable {
        var offsetWidth: Int
        var nameLength: Int
        var blockingCount: Int
        var identificationCount: Int
        var labelByteCount: Int
        // Where each part starts, and the size: computed from the counts.
        let nameOffset: Int
        let blockingOffset: Int
        let identificationOffset: Int
        let labelOffsetsOffset: Int
        let labelBytesOffset: Int
        let fileSize: Int

        /// Nil when a count is absurd (a corrupted header): every step is overflow-checked.
        init?(offsetWidth: Int, nameLength: Int, blockingCount: Int, identificationCount: Int, labelByteCount: Int) {
            guard offsetWidth == 4 || offsetWidth == 8,
                  nameLength >= 0, blockingCount >= 0, identificationCount >= 0, labelByteCount >= 0
            else { return nil }
            self.offsetWidth = offsetWidth
            self.nameLength = nameLength
            self.blockingCount = blockingCount
            self.identificationCount = identificationCount
            self.labelByteCount = labelByteCount
            func add(_ a: Int, _ b: Int) -> Int? {
                let (sum, overflow) = a.addingReportingOverflow(b)
                return overflow ? nil : sum
            }
            func times(_ a: Int, _ b: Int) -> Int? {
                let (product, overflow) = a.multipliedReportingOverflow(by: b)
                return overflow ? nil : product
            }
            func aligned(_ a: Int?) -> Int? { a.flatMap { add($0, 7) }.map { $0 & ~7 } }
            let nameOffset = DirectoryFile.headerSize
            guard let blocking = aligned(add(nameOffset, nameLength)),
                  let blockingBytes = times(blockingCount, 8),
                  let identification = add(blocking, blockingBytes),
                  let identificationBytes = times(identificationCount, 8),
                  let labelOffsets = add(identification, identificationBytes),
                  let offsetCount = add(identificationCount, 1),
                  let offsetBytes = times(offsetCount, offsetWidth),
                  let labelBytes = aligned(add(labelOffsets, offsetBytes)),
                  let size = add(labelBytes, labelByteCount)
            else { return nil }
            self.nameOffset = nameOffset
            blockingOffset = blocking
            identificationOffset = identification
            labelOffsetsOffset = labelOffsets
            labelBytesOffset = labelBytes
            fileSize = size
        }

        func header(dataChecksum: UInt64) -> [UInt64] {
            var words: [UInt64] = [
                DirectoryFile.magic, DirectoryFile.version, UInt64(offsetWidth), UInt64(nameLength),
                UInt64(blockingCount), UInt64(identificationCount), UInt64(labelByteCount),
                UInt64(nameOffset), UInt64(blockingOffset), UInt64(identificationOffset),
                UInt64(labelOffsetsOffset), UInt64(labelBytesOffset), UInt64(fileSize),
                dataChecksum, 0,
            ]
            words.append(words.withUnsafeBytes { DirectoryFile.checksum($0) })
            return words.map(\.littleEndian)
        }
    }

    // MARK: - Names

    /// The file of a provider: the hex of its name's UTF-8 (only [0-9a-f],
    /// never a path, never hidden), or for names over 100 bytes `h` and the
    /// hex of a 128-bit hash; the full name is kept inside the file and checked.
    static func fileName(for providerName: String) -> String {
        let bytes = Array(providerName.utf8)
        if bytes.count <= 100 {
            return hex(bytes) + fileExtension
        }
        let (first, second) = bytes.withUnsafeBytes { (checksum($0, seed: 1), checksum($0, seed: 2)) }
        return "h" + hex(withUnsafeBytes(of: (first.bigEndian, second.bigEndian)) { Array($0) }) + fileExtension
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Checksum

    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var h = value &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 32
        return h
    }

    /// A fast word-wise hash: detects corruption, not tampering. `droppingPages`: `bytes` are a file
    /// mapping whose pages are taken out of memory again as soon as they are read (`dropMappedPages`).
    static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xCBF2_9CE4_8422_2325, droppingPages: Bool = false) -> UInt64 {
        var h = seed
        guard let base = bytes.baseAddress else { return mix(h) }
        let words = bytes.count / 8
        var index = 0
        while index < words {
            // In slices, giving way between them (`Pacer`): a large directory is hundreds of MB.
            let end = Swift.min(words, index + Pacer.stepsBetweenYields)
            let start = index
            while index < end {
                h = mix(h ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)))
                index += 1
            }
            if droppingPages { dropMappedPages(base + start * 8, (end - start) * 8) }
            if end < words { sched_yield() }
        }
        var tail: UInt64 = 0
        for index in (words * 8)..<bytes.count {
            tail |= UInt64(bytes[index]) << (8 * UInt64(index - words * 8))
        }
        return mix(h ^ tail ^ (UInt64(bytes.count) << 1))
    }

    /// The sections' checksum, chained in file order.
    static func dataChecksum(name: UnsafeRawBufferPointer, storage: DirectoryStorage) -> UInt64 {
        var h = checksum(name)
        h = checksum(UnsafeRawBufferPointer(storage.blocking), seed: h)
        h = checksum(UnsafeRawBufferPointer(storage.identification), seed: h)
        if let offsets = storage.labelOffsets {
            h = checksum(UnsafeRawBufferPointer(start: offsets, count: (storage.identification.count + 1) * storage.offsetWidth), seed: h)
        } else {
            h = checksum(UnsafeRawBufferPointer(start: nil, count: 0), seed: h)
        }
        // An update's staged labels are read from their file a slice at a time, never all in memory.
        return checksum(UnsafeRawBufferPointer(storage.labelBytes), seed: h, droppingPages: storage.labelsAreStaged)
    }

    // MARK: - Saving

    /// Writes a temporary file in `folder`, fsyncs it, renames it over
    /// `fileName` and fsyncs the folder: readers see the old file or the new
    /// one, never a part, also after a crash.
    static func save(_ storage: DirectoryStorage, providerName: String, folder: String, fileName: String) throws(DirectoryError) {
        #if !_endian(little)
        throw .storageFailed("Directory files are little-endian; this machine is not.")
        #endif
        let nameBytes = Array(providerName.utf8)
        guard let layout = Layout(
            offsetWidth: storage.offsetWidth, nameLength: nameBytes.count,
            blockingCount: storage.blocking.count, identificationCount: storage.identification.count,
            labelByteCount: storage.labelBytes.count)
        else { throw .storageFailed("The directory of \(providerName) is too large to save.") }
        let zeroOffset = [UInt64](repeating: 0, count: 1)
        let header = nameBytes.withUnsafeBytes { nameRaw in
            if storage.labelOffsets != nil {
                return layout.header(dataChecksum: dataChecksum(name: nameRaw, storage: storage))
            }
            // No identification entries: the single offset 0 is written from `zeroOffset`.
            return zeroOffset.withUnsafeBytes { zero in
                let placeholder = DirectoryStorage(
                    blocking: storage.blocking, identification: storage.identification,
                    labelOffsets: zero.baseAddress, offsetWidth: storage.offsetWidth,
                    labelBytes: storage.labelBytes, owner: .none)
                return layout.header(dataChecksum: dataChecksum(name: nameRaw, storage: placeholder))
            }
        }

        let temporary = "\(folder)/.\(fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storageFailed("Cannot create \(temporary): \(errorText())") }
        var written = 0
        func put(_ bytes: UnsafeRawBufferPointer, droppingPages: Bool = false) throws(DirectoryError) {
            guard var pointer = bytes.baseAddress else { return }
            var remaining = bytes.count
            while remaining > 0 {
                // A MB at a time, giving way between (`Pacer`): one write of 160 MB holds a CPU throughout.
                let n = Glibc.write(fd, pointer, Swift.min(remaining, 1 << 20))
                sched_yield()
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .storageFailed("Cannot write \(temporary): \(errorText())")
                }
                if droppingPages { dropMappedPages(pointer, n) }
                pointer += n
                remaining -= n
                written += n
            }
        }
        func pad(to offset: Int) throws(DirectoryError) {
            let zeros = [UInt8](repeating: 0, count: offset - written)
            do {
                try zeros.withUnsafeBytes { try put($0) }
            } catch let error as DirectoryError {
                throw error
            } catch {
                throw .storageFailed("\(error)")
            }
        }
        do {
            try header.withUnsafeBytes { try put($0) }
            try nameBytes.withUnsafeBytes { try put($0) }
            try pad(to: layout.blockingOffset)
            try put(UnsafeRawBufferPointer(storage.blocking))
            try put(UnsafeRawBufferPointer(storage.identification))
            if let offsets = storage.labelOffsets {
                try put(UnsafeRawBufferPointer(start: offsets, count: (storage.identification.count + 1) * storage.offsetWidth))
            } else {
                try pad(to: written + storage.offsetWidth)
            }
            try pad(to: layout.labelBytesOffset)
            try put(UnsafeRawBufferPointer(storage.labelBytes), droppingPages: storage.labelsAreStaged)
            guard written == layout.fileSize else { throw DirectoryError.storageFailed("Wrote \(written) bytes of \(layout.fileSize) to \(temporary).") }
            guard fsync(fd) == 0 else { throw DirectoryError.storageFailed("Cannot fsync \(temporary): \(errorText())") }
            guard close(fd) == 0 else {
                unlink(temporary)
                throw DirectoryError.storageFailed("Cannot close \(temporary): \(errorText())")
            }
        } catch let error as DirectoryError {
            close(fd)
            unlink(temporary)
            throw error
        } catch {
            close(fd)
            unlink(temporary)
            throw .storageFailed("Cannot write \(temporary): \(error)")
        }
        let final = "\(folder)/\(fileName)"
        guard rename(temporary, final) == 0 else {
            let text = errorText()
            unlink(temporary)
            throw .storageFailed("Cannot rename \(temporary) to \(final): \(text)")
        }
        try syncFolder(folder)
    }

    static func syncFolder(_ folder: String) throws(DirectoryError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .storageFailed("Cannot open \(folder): \(errorText())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .storageFailed("Cannot fsync \(folder): \(errorText())") }
    }

    // MARK: - Loading

    /// Maps a directory file read-only (MAP_SHARED). O(1): only the header is
    /// read and checked. Nil if there is no such file. A file that is
    /// truncated or corrupted is `corruptDirectory`, never a crash.
    static func load(path: String) throws(DirectoryError) -> (providerName: String, directory: Directory)? {
        #if !_endian(little)
        throw .storageFailed("Directory files are little-endian; this machine is not.")
        #endif
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .storageFailed("Cannot open \(path): \(errorText())")
        }
        // Kept open with the mapping (the directory's intact check reads it), else closed here.
        var keepsDescriptor = false
        defer { if !keepsDescriptor { close(fd) } }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .storageFailed("Cannot stat \(path): \(errorText())") }
        let size = Int(info.st_size)
        guard size >= headerSize else {
            throw .corruptDirectory("\(path) is truncated: \(size) bytes, shorter than the \(headerSize)-byte header.")
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), base != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw .storageFailed("Cannot map \(path): \(errorText())")
        }
        do {
            let mapped = try storage(mapping: base, size: size, path: path, source: MappedFile(descriptor: fd, info: info))
            keepsDescriptor = true
            let name = String(decoding: UnsafeRawBufferPointer(start: base + headerSize, count: Int(word(base, 3))), as: UTF8.self)
            return (name, Directory(storage: mapped))
        } catch {
            munmap(base, size)
            throw error
        }
    }

    @inline(__always)
    static func word(_ base: UnsafeRawPointer, _ index: Int) -> UInt64 {
        UInt64(littleEndian: base.load(fromByteOffset: index * 8, as: UInt64.self))
    }

    private static func storage(mapping base: UnsafeMutableRawPointer, size: Int, path: String, source: MappedFile) throws(DirectoryError) -> DirectoryStorage {
        let header = UnsafeRawBufferPointer(start: base, count: headerSize)
        guard word(base, 0) == magic else { throw .corruptDirectory("\(path) is not a call directory file (bad magic).") }
        guard word(base, 1) == version else {
            throw .corruptDirectory("\(path) has format version \(word(base, 1)); this service reads version \(version).")
        }
        guard word(base, 15) == checksum(UnsafeRawBufferPointer(rebasing: header[0..<(15 * 8)])) else {
            throw .corruptDirectory("\(path) is corrupted: the header checksum does not match.")
        }
        func int(_ index: Int) -> Int { Int(truncatingIfNeeded: word(base, index)) }
        guard let layout = Layout(
            offsetWidth: int(2), nameLength: int(3), blockingCount: int(4),
            identificationCount: int(5), labelByteCount: int(6)),
            int(7) == layout.nameOffset, int(8) == layout.blockingOffset,
            int(9) == layout.identificationOffset, int(10) == layout.labelOffsetsOffset,
            int(11) == layout.labelBytesOffset, int(12) == layout.fileSize
        else { throw .corruptDirectory("\(path) is corrupted: its counts and offsets do not agree.") }
        guard size == layout.fileSize else {
            throw .corruptDirectory("\(path) is \(size < layout.fileSize ? "truncated" : "too long"): \(size) bytes, the header says \(layout.fileSize).")
        }
        let offsets = UnsafeRawPointer(base + layout.labelOffsetsOffset)
        let firstOffset = layout.offsetWidth == 4
            ? UInt64(UInt32(littleEndian: offsets.load(as: UInt32.self)))
            : UInt64(littleEndian: offsets.load(as: UInt64.self))
        let lastOffset = layout.offsetWidth == 4
            ? UInt64(UInt32(littleEndian: offsets.load(fromByteOffset: layout.identificationCount * 4, as: UInt32.self)))
            : UInt64(littleEndian: offsets.load(fromByteOffset: layout.identificationCount * 8, as: UInt64.self))
        guard firstOffset == 0, lastOffset == UInt64(layout.labelByteCount) else {
            throw .corruptDirectory("\(path) is corrupted: the label offsets do not span the label bytes.")
        }
        return DirectoryStorage(
            blocking: .init(start: (base + layout.blockingOffset).assumingMemoryBound(to: Int64.self), count: layout.blockingCount),
            identification: .init(start: (base + layout.identificationOffset).assumingMemoryBound(to: Int64.self), count: layout.identificationCount),
            labelOffsets: offsets, offsetWidth: layout.offsetWidth,
            labelBytes: .init(start: (base + layout.labelBytesOffset).assumingMemoryBound(to: UInt8.self), count: layout.labelByteCount),
            fileChecksum: word(base, 13), source: source,
            owner: .mapping(base, size))
    }
}

func errorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// What a failed file operation of FoundationEssentials says to a person: the
/// system's words for the errno under it (FoundationEssentials has no
/// `localizedDescription`; its CocoaError prints as a dictionary).
public func errorText(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError { return errorText(posix.code.rawValue) }
    if let posix = error as? POSIXError { return errorText(posix.code.rawValue) }
    return "\(error)"
}

extension Directory {
    /// Reads every entry of a directory loaded from a file and checks the
    /// sections' checksum, that each kind is strictly ascending and that the
    /// label offsets never decrease. O(n): loading itself checks only the header.
    public func verify() throws(DirectoryError) {
        let storage = self.storage
        if let expected = storage.fileChecksum {
            // The name sits right after the header; the mapping owner knows where.
            if case .mapping(let base, _) = storage.owner {
                let name = UnsafeRawBufferPointer(start: base + DirectoryFile.headerSize, count: Int(DirectoryFile.word(base, 3)))
                guard DirectoryFile.dataChecksum(name: name, storage: storage) == expected else {
                    throw .corruptDirectory("The directory file is corrupted: its entries do not match their checksum.")
                }
            }
        }
        for kind in [storage.blocking, storage.identification] {
            for index in kind.indices.dropFirst() where kind[index - 1] >= kind[index] {
                throw .corruptDirectory("The directory is corrupted: entries are not strictly ascending at \(index).")
            }
        }
        var previous = 0
        for index in 0...storage.identification.count where storage.labelOffsets != nil {
            let offset = storage.offset(index)
            guard offset >= previous, offset <= storage.labelBytes.count else {
                throw .corruptDirectory("The directory is corrupted: label offset \(index) is out of place.")
            }
            previous = offset
        }
    }
}
