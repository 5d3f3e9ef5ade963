import Testing
@testable import CallDirectory

/// An open update's memory is bounded in bytes, additions and removals together, and all open
/// updates of a store together (issue 39: adding and removing in turn once held 1.5 GiB).
@Suite("Directory updates: memory bounded in bytes")
struct DirectoryUpdateMemoryTests {
    /// `count` ascending numbers from `start`.
    static func numbers(_ start: Int64, _ count: Int) -> [Int64] { (0..<Int64(count)).map { start + $0 } }

    @Test("add, remove, add again: removing an addition frees no room, and the update stops at 128 MiB")
    func addRemoveAdd() throws {
        let update = DirectoryUpdate(kind: .incremental)
        let batch = 1_000_000
        var next: Int64 = 1
        var removedNext: Int64 = 1
        var refusal: DirectoryError?
        // Blocking additions, each batch removed again (cancelled) at once; the additions in effect stay 0.
        rounds: for _ in 0..<100 {
            do {
                try update.addBlocking(Self.numbers(next, batch))
                next += Int64(batch)
                try update.removeBlocking(Self.numbers(removedNext, batch))
                removedNext += Int64(batch)
            } catch {
                refusal = error
                break rounds
            }
        }
        #expect(update.blockingAdditionCount == 0 || update.blockingAdditionCount == batch)
        let error = try #require(refusal, "the update grew without bound")
        #expect(error.name == "MaximumEntriesExceeded")
        #expect(error.message.contains("128 MiB"), "\(error.message)")
        #expect(update.heldBytes <= DirectoryLimits.maximumUpdateBytes)
        // Figures: what it held when refused (before, 100 rounds held 2.4 GB of numbers and indices).
        print("add-remove-add: refused after \(next - 1) additions, holding \(update.heldBytes >> 20) MiB")
    }

    @Test("identification labels count with their numbers; a refused batch keeps nothing")
    func labelsCount() throws {
        let update = DirectoryUpdate(kind: .complete)
        let label = String(repeating: "x", count: 200)
        let batch = 100_000
        var start: Int64 = 1
        var added = 0
        while true {
            let before = update.heldBytes
            do {
                try update.addIdentification(Self.numbers(start, batch), labels: Array(repeating: label, count: batch))
            } catch {
                #expect(error.name == "MaximumEntriesExceeded")
                #expect(update.heldBytes == before, "a refused batch keeps nothing")
                break
            }
            added += batch
            start += Int64(batch)
        }
        #expect(added > 0 && update.heldBytes <= DirectoryLimits.maximumUpdateBytes)
    }

    @Test("all open updates together stay within the store's budget; an update that ends gives its room back")
    func budgetAcrossUpdates() throws {
        let budget = DirectoryUpdateBudget(limit: 20 << 20)
        let first = DirectoryUpdate(kind: .complete, budget: budget)
        let second = DirectoryUpdate(kind: .complete, budget: budget)
        try first.addBlocking(Self.numbers(1, 2_000_000))  // 16 MB
        let error = #expect(throws: DirectoryError.self) { try second.addBlocking(Self.numbers(1, 1_000_000)) }
        #expect(error?.name == "MaximumEntriesExceeded")
        #expect(error?.message.contains("all the service keeps") == true)
        try second.addBlocking(Self.numbers(1, 100_000))
        #expect(budget.heldBytes == first.heldBytes + second.heldBytes)
        first.cancel()
        #expect(budget.heldBytes == second.heldBytes)
        try second.addBlocking(Self.numbers(200_000, 1_000_000))
        _ = try Directory.empty.applying(second)
        #expect(budget.heldBytes == 0, "applied: its memory is the directory's now")
    }
}
