import CBoundary
import Glibc

/// A malloc'd, contiguous column of plain values that grows by `realloc` (on
/// Linux large blocks grow by `mremap`, without copying) and can hand its
/// memory over to a directory without a copy.
final class Column<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private(set) var capacity = 0

    init() {}

    init(capacity: Int) { reserve(capacity) }

    deinit { releaseGently(base, count: capacity) }

    var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    var last: Element? { count > 0 ? base![count - 1] : nil }

    subscript(index: Int) -> Element { base![index] }

    func reserve(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        resize(to: Swift.max(minimumCapacity, 16))
    }

    /// Room for `extra` more elements, growing geometrically.
    func reserveMore(_ extra: Int) {
        let needed = count + extra
        guard needed > capacity else { return }
        resize(to: Swift.max(needed, capacity * 2, 16))
    }

    func append(_ element: Element) {
        if count == capacity { reserveMore(1) }
        base![count] = element
        count += 1
    }

    func append(contentsOf elements: UnsafeBufferPointer<Element>) {
        guard let source = elements.baseAddress, elements.count > 0 else { return }
        reserveMore(elements.count)
        (base! + count).update(from: source, count: elements.count)
        count += elements.count
    }

    /// After writing `added` elements into reserved memory past `count`.
    func didAppend(_ added: Int) {
        precondition(count + added <= capacity)
        count += added
    }

    /// Forgets the elements, keeping the memory for new ones.
    func clear() { count = 0 }

    func removeAll() {
        releaseGently(base, count: capacity)
        base = nil
        count = 0
        capacity = 0
    }

    /// Gives up the memory as it is, with its size in bytes (to be freed with `releaseGently`),
    /// leaving the column empty.
    func takeMemory() -> (UnsafeMutableRawPointer?, Int) {
        let memory = (UnsafeMutableRawPointer(base), capacity * MemoryLayout<Element>.stride)
        base = nil
        count = 0
        capacity = 0
        return memory
    }

    /// Gives up the memory (to be freed with `free`), leaving the column empty.
    func take() -> UnsafeMutablePointer<Element>? {
        if count > 0, count < capacity { resize(to: count) }
        let memory = base
        base = nil
        count = 0
        capacity = 0
        return memory
    }

    private func resize(to newCapacity: Int) {
        let bytes = newCapacity * MemoryLayout<Element>.stride
        guard let memory = realloc(base, Swift.max(bytes, 1)) else {
            fatalError("CallDirectory: out of memory growing a column to \(bytes) bytes")
        }
        base = memory.bindMemory(to: Element.self, capacity: newCapacity)
        capacity = newCapacity
    }
}

/// Memory given up by columns (`takeMemory`), to be freed on another thread: blocks no one
/// else holds any more.
struct DiscardedMemory: Sendable {
    let blocks: UncheckedSendable<[(UnsafeMutableRawPointer?, Int)]>

    init(blocks: [(UnsafeMutableRawPointer?, Int)]) { self.blocks = UncheckedSendable(blocks) }

    func free() {
        for (block, bytes) in blocks.value { releaseGently(block, bytes: bytes) }
    }
}

extension UnsafeBufferPointer where Element == Int64 {
    /// The first index whose number is not below `number`. Branchless (the
    /// comparison becomes a conditional move), so a lookup costs its cache
    /// misses, not mispredicted branches.
    @inline(__always)
    func lowerBound(_ number: Int64) -> Int {
        guard let base = baseAddress, count > 0 else { return 0 }
        var low = 0
        var length = count
        while length > 1 {
            let half = length >> 1
            low = base[low + half] < number ? low + half : low
            length -= half
        }
        return base[low] < number ? low + 1 : low
    }

    /// The index of `number` by binary search.
    @inline(__always)
    func index(of number: Int64) -> Int? {
        let index = lowerBound(number)
        return index < count && self[index] == number ? index : nil
    }
}
