import Dispatch
import Foundation
import Testing
@testable import CallDirectory

/// An open update of a store keeps its labels staged in a file, copied there on the store's lane
/// one batch after another; its owner never waits for that, and the lane applies one update at a
/// time (issue 53, probe finding #5: three apps' 64 MiB updates at once held 358 MiB).
@Suite("Directory updates: labels staged on the store's lane")
struct StagedLabelsTests {
    static func numbers(_ start: Int64, _ count: Int) -> [Int64] { (0..<Int64(count)).map { start + $0 } }
    /// A label of 100 bytes naming `number`.
    static func label(_ number: Int64) -> String { String("label \(number) ".padding(toLength: 100, withPad: "x", startingAt: 0)) }

    /// A store whose lane is held busy (until `blocked` is signalled), and a complete update of
    /// provider "P" that took 20,000 identification entries meanwhile.
    static func twentyThousandLabelsWhileTheLaneIsBusy(in folder: TemporaryFolder) throws -> (DirectoryStore, DispatchSemaphore, DirectoryUpdate) {
        let store = try DirectoryStore(folder: folder.path)
        let blocked = DispatchSemaphore(value: 0)
        store.lane.async { blocked.wait() }
        let update = try store.beginUpdate(providerName: "P", kind: .complete)
        let numbers = numbers(1, 20_000)
        try update.addIdentification(numbers, labels: numbers.map(label))
        return (store, blocked, update)
    }

    @Test("a store's update stages its labels in a file nobody sees (nothing in the folder, only a MB in memory); applied, they read back whole, merged with a saved directory too")
    func labelsAreStagedAndReadBack() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let update = try store.beginUpdate(providerName: "P", kind: .complete)
        // 3 MB of labels in three batches.
        for batch in 0..<3 {
            let numbers = Self.numbers(1 + Int64(batch) * 10_000, 10_000)
            try update.addIdentification(numbers, labels: numbers.map(Self.label))
        }
        #expect(update.heldBytes == 30_000 * 110, "staged or not, the labels count against the update's bounds")
        let staged = try store.lane.sync { () throws(DirectoryError) in (update.labels.isStaged, update.labels.count) }
        #expect(staged == (true, 3_000_000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "the staged labels have no name")
        let directory = try store.completeUpdate(providerName: "P")
        #expect(directory.identificationCount == 30_000)
        for number: Int64 in [1, 9_999, 10_000, 10_001, 29_999, 30_000] { #expect(directory.label(for: number) == Self.label(number)) }

        // Incremental: removals and staged additions merged with the saved directory's labels.
        let next = try store.beginUpdate(providerName: "P", kind: .incremental)
        try next.removeIdentification([2, 3])
        let added = Self.numbers(30_001, 20_000)
        try next.addIdentification(added, labels: added.map(Self.label))
        let merged = try store.completeUpdate(providerName: "P")
        #expect(merged.identificationCount == 49_998)
        for number: Int64 in [1, 4, 30_000, 30_001, 50_000] { #expect(merged.label(for: number) == Self.label(number)) }
        #expect(merged.label(for: 2) == nil && merged.label(for: 3) == nil)
        #expect(try DirectoryStore(folder: folder.path).load(providerName: "P").label(for: 50_000) == Self.label(50_000))
    }

    @Test("RemoveAllIdentificationEntries drops the staged labels: only those added after it are applied")
    func removeAllDropsStagedLabels() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let update = try store.beginUpdate(providerName: "P", kind: .incremental)
        let first = Self.numbers(1, 20_000)
        try update.addIdentification(first, labels: first.map(Self.label))
        try update.removeAllIdentification()
        try update.addIdentification([30_000], labels: ["after"])
        let directory = try store.completeUpdate(providerName: "P")
        #expect(directory.identificationPairs == ["30000=after"])
    }

    @Test("where no file can be made the labels stay in memory, and the update works as before")
    func noFolderKeepsThemInMemory() throws {
        let lane = DirectoryLane()
        let update = DirectoryUpdate(kind: .complete, lane: lane, stagingFolder: "/nonexistent/\(UUID().uuidString)")
        let numbers = Self.numbers(1, 20_000)
        try update.addIdentification(numbers, labels: numbers.map(Self.label))
        let staged = try lane.sync { () throws(DirectoryError) in (update.labels.isStaged, update.labels.count) }
        #expect(staged == (false, 2_000_000))
        let directory = try Directory.empty.applying(update)
        #expect(directory.identificationCount == 20_000 && directory.label(for: 20_000) == Self.label(20_000))
    }

    @Test("the owner never waits for the lane: batches are taken while it is busy, and a completion waits for them, then runs alone")
    func ownerNeverWaitsForTheLane() async throws {
        let folder = TemporaryFolder()
        // Taken and answered while the lane cannot run anything.
        let (store, blocked, update) = try Self.twentyThousandLabelsWhileTheLaneIsBusy(in: folder)
        try update.addBlocking([5, 6])
        let completion = try store.beginCompletion(providerName: "P")
        let running = Task.detached { Result { () throws(DirectoryError) in try completion.run() } }
        blocked.signal()
        let (directory, _) = try store.finishCompletion(completion, await running.value)
        #expect(directory.isMapped && directory.identificationCount == 20_000 && directory.blockingEntries == [5, 6])
        #expect(directory.label(for: 12_345) == Self.label(12_345))
    }

    @Test("an update cancelled or dropped while its labels are on their way frees them on the lane; the budget is given back at once")
    func cancelledWhileOnTheirWay() throws {
        let folder = TemporaryFolder()
        let (store, blocked, update) = try Self.twentyThousandLabelsWhileTheLaneIsBusy(in: folder)
        store.cancelUpdate(providerName: "P")
        #expect(store.updateBudget.heldBytes == 0)
        blocked.signal()
        store.lane.settle()
        let closed = try store.lane.sync { () -> (Bool, Int) in (update.labels.isStaged, update.labels.count) }
        #expect(closed == (false, 0))
        #expect(errorName { try update.addIdentification([30_000], labels: ["late"]) } == "InvalidArgs")
    }
}
