// libFuzzer entry: the directory file loader, its verification and lookups.
// Linked by scripts/fuzz with the CallDirectory module and what it depends on; not part of the package.

@testable import CallDirectory
import Glibc

/// A tmpfs file rewritten for each input.
private let path: String = {
    let folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(folder)/monkeycall-fuzz-directory.\(getpid())"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDirectoryFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Random bytes almost never pass the checksums; the first byte says which the
    // harness puts right, so that the fuzzer reaches the checks behind them.
    if let mode = bytes.first {
        bytes.removeFirst()
        if bytes.count >= DirectoryFile.headerSize {
            func setWord(_ index: Int, _ value: UInt64) {
                withUnsafeBytes(of: value.littleEndian) { word in
                    for k in 0..<8 { bytes[index * 8 + k] = word[k] }
                }
            }
            if mode & 1 != 0 { setWord(12, UInt64(bytes.count)) }
            if mode & 2 != 0 {
                let header = bytes.withUnsafeBytes { DirectoryFile.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(15 * 8)])) }
                setWord(15, header)
            }
        }
    }
    func store(_ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
    store(bytes)
    guard var loaded = try? DirectoryFile.load(path: path) else { return 0 }
    if size > 0, data[0] & 4 != 0 {
        let name = Array(loaded.providerName.utf8)
        // The sections' checksum too, so that verification passes and the entries are read.
        let sum = name.withUnsafeBytes { DirectoryFile.dataChecksum(name: $0, storage: loaded.directory.storage) }
        withUnsafeBytes(of: sum.littleEndian) { word in for k in 0..<8 { bytes[13 * 8 + k] = word[k] } }
        let header = bytes.withUnsafeBytes { DirectoryFile.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(15 * 8)])) }
        withUnsafeBytes(of: header.littleEndian) { word in for k in 0..<8 { bytes[15 * 8 + k] = word[k] } }
        store(bytes)
        guard let again = try? DirectoryFile.load(path: path) else { return 0 }
        loaded = again
    }
    let directory = loaded.directory
    let verified = (try? directory.verify()) != nil
    for number: Int64 in [1, 14085555555, Int64.max - 1, -1, 0] {
        _ = directory.isBlocked(number)
        _ = directory.label(for: number)
    }
    if verified {
        // A sound file reads whole, and what it holds survives a save and a load.
        let entries = directory.identificationEntries
        for (number, label) in entries { precondition(directory.label(for: number) == label) }
        for number in directory.blockingEntries { precondition(directory.isBlocked(number)) }
    }
    return 0
}
