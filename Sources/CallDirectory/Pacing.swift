import Glibc

/// Long work on a directory (applying, checksumming and writing 20,000,000
/// entries, freeing hundreds of MB) gives way often, so that it can run next to
/// a latency-sensitive thread on few cores. On an EEVDF scheduler (Linux 6.6
/// and later) a thread that wakes up (the service queue answering a call) may
/// wait for the running one's whole slice, about 3 ms, whatever their
/// priorities; a `sched_yield()` every 65,536 steps (a fraction of a
/// millisecond) hands the CPU over at once when someone waits, and costs about
/// a microsecond when nobody does. Measured by `monkeycall-bench --queue`: the
/// p99 of `Properties.Get` while a 20,000,000-entry directory completes went
/// from about 5 ms to under 1 ms on a 2-core machine.
struct Pacer {
    static let stepsBetweenYields = 65_536
    private var steps = 0

    init() {}

    @inline(__always)
    mutating func step(_ count: Int = 1) {
        steps &+= count
        if steps >= Self.stepsBetweenYields {
            steps = 0
            sched_yield()
        }
    }
}

/// Bytes handed back to the kernel between yields when memory is freed.
let releaseChunk = 4 << 20

/// Frees a malloc'd block of `bytes` (at most its size); a large one gives its
/// pages back a few MB at a time first (unmapping hundreds of MB is one long
/// system call otherwise).
func releaseGently(_ pointer: UnsafeMutableRawPointer?, bytes: Int) {
    guard let pointer else { return }
    if bytes >= 2 * releaseChunk { discardPages(pointer, bytes) }
    free(pointer)
}

func releaseGently<T>(_ pointer: UnsafeMutablePointer<T>?, count: Int) {
    releaseGently(UnsafeMutableRawPointer(pointer), bytes: count * MemoryLayout<T>.stride)
}

/// Unmaps a mapping, dropping its pages a few MB at a time first.
func unmapGently(_ base: UnsafeMutableRawPointer, _ length: Int) {
    if length >= 2 * releaseChunk { discardPages(base, length) }
    munmap(base, length)
}

/// Takes the pages of a file mapping inside `[start, start + length)` out of the process's memory
/// once they have been read: they stay in the page cache, and a later read maps them again.
/// Never for anonymous memory, whose pages it would zero.
func dropMappedPages(_ start: UnsafeRawPointer, _ length: Int) {
    guard length > 0 else { return }
    discardPages(UnsafeMutableRawPointer(mutating: start), length)
}

/// `MADV_DONTNEED` over the whole pages inside `[start, start + length)`, a chunk at a time.
private func discardPages(_ start: UnsafeMutableRawPointer, _ length: Int) {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let first = (Int(bitPattern: start) + page - 1) & ~(page - 1)
    let end = (Int(bitPattern: start) + length) & ~(page - 1)
    var chunk = first
    while chunk < end {
        let size = Swift.min(releaseChunk, end - chunk)
        madvise(UnsafeMutableRawPointer(bitPattern: chunk), size, MADV_DONTNEED)
        chunk += size
        sched_yield()
    }
}
