import Testing
@testable import CallDirectory

@Suite struct CallDirectoryUpdateTests {
    @Test func completeUpdateReplacesEverything() throws {
        let old = try Directory.make(blocking: [1, 2, 3], identification: [(10, "ten")])
        let update = DirectoryUpdate(kind: .complete)
        try update.addBlocking([5, 7])
        try update.addIdentification([20, 30], labels: ["Pizza", "Dentist"])
        let new = try old.applying(update)
        #expect(new.blockingEntries == [5, 7])
        #expect(new.identificationPairs == ["20=Pizza", "30=Dentist"])
        #expect(new.isBlocked(5) && !new.isBlocked(1) && !new.isBlocked(6))
        #expect(new.label(for: 30) == "Dentist")
        #expect(new.label(for: 10) == nil)
        #expect(old.isBlocked(1) && old.label(for: 10) == "ten") // The old one is a value: unchanged.
        #expect(update.isFinished)
    }

    @Test func batchesKeepTheAscendingCheckAcrossCalls() throws {
        let update = DirectoryUpdate(kind: .complete)
        try update.addBlocking([1, 2, 3])
        try update.addBlocking([4, 100])
        #expect(errorName { try update.addBlocking([50]) } == "EntriesOutOfOrder")
        #expect(errorName { try update.addBlocking([100]) } == "DuplicateEntries")
        #expect(errorName { try update.addBlocking([101, 101]) } == "DuplicateEntries")
        #expect(errorName { try update.addBlocking([102, 101]) } == "EntriesOutOfOrder")
        // Each kind has its own order; a failed batch adds nothing.
        try update.addIdentification([2], labels: ["two"])
        try update.addBlocking([101])
        let directory = try Directory.empty.applying(update)
        #expect(directory.blockingEntries == [1, 2, 3, 4, 100, 101])
        #expect(directory.label(for: 2) == "two")
    }

    @Test func outOfOrderInsideOneBatchAddsNothing() throws {
        let update = DirectoryUpdate(kind: .complete)
        let error = #expect(throws: DirectoryError.self) { try update.addBlocking([1, 3, 2]) }
        #expect(error?.name == "EntriesOutOfOrder")
        #expect(error?.message.contains("2 follows 3") == true)
        #expect(update.blockingAdditionCount == 0)
    }

    @Test(arguments: [Int64(0), -1, Int64.max, Int64.min])
    func numbersOutOfRangeAreInvalidAndNamed(number: Int64) throws {
        let update = DirectoryUpdate(kind: .complete)
        let error = #expect(throws: DirectoryError.self) { try update.addBlocking([number]) }
        #expect(error?.name == "InvalidArgs")
        #expect(error?.message.contains("\(number)") == true)
        #expect(errorName { try update.addIdentification([number], labels: ["x"]) } == "InvalidArgs")
        try update.addBlocking([1, Int64.max - 1]) // The bounds themselves are fine.
    }

    @Test func labelsUpTo256BytesOfUTF8() throws {
        let update = DirectoryUpdate(kind: .complete)
        try update.addIdentification([1], labels: [String(repeating: "é", count: 128)]) // 256 bytes
        let error = #expect(throws: DirectoryError.self) {
            try update.addIdentification([2], labels: [String(repeating: "a", count: 255) + "é"]) // 257 bytes
        }
        #expect(error?.name == "InvalidArgs")
        #expect(error?.message.contains("257") == true)
        #expect(errorName { try update.addIdentification([3, 4], labels: ["one"]) } == "InvalidArgs")
        try update.addIdentification([5], labels: ["Zoë 🐒"])
        try update.addIdentification([], labels: [])
        try update.addIdentification([6, 7], labels: ["", ""])
        let directory = try Directory.empty.applying(update)
        #expect(directory.label(for: 6) == "" && directory.label(for: 7) == "")
        #expect(directory.label(for: 1) == String(repeating: "é", count: 128))
        #expect(directory.label(for: 5) == "Zoë 🐒")
    }

    @Test func removalsOnlyInIncrementalUpdates() throws {
        let update = DirectoryUpdate(kind: .complete)
        #expect(errorName { try update.removeBlocking([1]) } == "UnexpectedIncrementalRemoval")
        #expect(errorName { try update.removeAllBlocking() } == "UnexpectedIncrementalRemoval")
        #expect(errorName { try update.removeIdentification([1]) } == "UnexpectedIncrementalRemoval")
        #expect(errorName { try update.removeAllIdentification() } == "UnexpectedIncrementalRemoval")
    }

    @Test func incrementalMergesAdditionsAndRemovals() throws {
        let old = try Directory.make(blocking: [10, 20, 30, 40], identification: [(10, "a"), (20, "b"), (30, "c")])
        let update = DirectoryUpdate(kind: .incremental)
        try update.removeBlocking([5, 20])
        try update.removeBlocking([40])
        try update.addBlocking([15, 30, 50]) // 30 is already there: kept once.
        try update.removeIdentification([10])
        try update.addIdentification([25, 30], labels: ["new", "c2"]) // 30 relabelled.
        let new = try old.applying(update)
        #expect(new.blockingEntries == [10, 15, 30, 50])
        #expect(new.identificationPairs == ["20=b", "25=new", "30=c2"])
        #expect(old.blockingEntries == [10, 20, 30, 40])
    }

    @Test func removalOrderIsCheckedPerKind() throws {
        let update = DirectoryUpdate(kind: .incremental)
        try update.removeBlocking([5, 9])
        #expect(errorName { try update.removeBlocking([7]) } == "EntriesOutOfOrder")
        #expect(errorName { try update.removeBlocking([9]) } == "DuplicateEntries")
        try update.removeIdentification([1]) // Its own order.
        #expect(errorName { try update.removeIdentification([0]) } == "InvalidArgs")
    }

    @Test func callsTakeEffectInOrder() throws {
        let old = try Directory.make(blocking: [1, 2, 3], identification: [(1, "one"), (2, "two")])
        let update = DirectoryUpdate(kind: .incremental)
        try update.addBlocking([5, 6])
        try update.removeBlocking([2, 5]) // 5 was added in this update: that addition is cancelled.
        try update.addBlocking([7])
        try update.addIdentification([3, 4], labels: ["three", "four"])
        try update.removeIdentification([3])
        let new = try old.applying(update)
        #expect(new.blockingEntries == [1, 3, 6, 7])
        #expect(new.identificationPairs == ["1=one", "2=two", "4=four"])
    }

    @Test func removeAllThenAdd() throws {
        let old = try Directory.make(blocking: [1, 2, 3], identification: [(1, "one"), (2, "two")])
        let update = DirectoryUpdate(kind: .incremental)
        try update.addBlocking([9])
        try update.removeAllBlocking() // Drops 9 too.
        try update.addBlocking([10])
        #expect(errorName { try update.addBlocking([4]) } == "EntriesOutOfOrder") // Across the whole update.
        try update.removeAllIdentification()
        try update.addIdentification([2], labels: ["deux"])
        let new = try old.applying(update)
        #expect(new.blockingEntries == [10])
        #expect(new.identificationPairs == ["2=deux"])
    }

    @Test func maximumEntriesCountsTheResult() throws {
        let old = try Directory.make(blocking: [1, 2, 3], identification: [(1, "x")])
        let update = DirectoryUpdate(kind: .incremental, maximumEntries: 5)
        try update.addBlocking([4])
        try update.addIdentification([2], labels: ["y"])
        let error = #expect(throws: DirectoryError.self) { try old.applying(update) } // 4 + 2 = 6 > 5
        #expect(error?.name == "MaximumEntriesExceeded")
        #expect(old.blockingEntries == [1, 2, 3])
        #expect(update.isFinished)

        let fine = DirectoryUpdate(kind: .incremental, maximumEntries: 5)
        try fine.removeBlocking([1, 2])
        try fine.addIdentification([2, 3], labels: ["y", "z"])
        #expect(try old.applying(fine).count == 4)

        let tooMany = DirectoryUpdate(kind: .complete, maximumEntries: 5)
        try tooMany.addBlocking([1, 2, 3])
        #expect(errorName { try tooMany.addIdentification([1, 2, 3], labels: ["a", "b", "c"]) } == "MaximumEntriesExceeded")
        try tooMany.addIdentification([1, 2], labels: ["a", "b"]) // Nothing of the failed batch stayed.
        #expect(try Directory.empty.applying(tooMany).count == 5)
    }

    @Test("a directory's labels are bounded all updates applied, not only each update's: incremental updates that add up past it are MaximumEntriesExceeded, the directory unchanged; one that removes as it adds is not refused for what it removes")
    func directoryLabelsAreBounded() throws {
        let label = String(repeating: "x", count: 100)
        func adding(_ numbers: [Int64], bound: Int = 250) throws -> DirectoryUpdate {
            let update = DirectoryUpdate(kind: .incremental, maximumDirectoryLabelBytes: bound)
            try update.addIdentification(numbers, labels: numbers.map { _ in label })
            return update
        }
        let two = try Directory.empty.applying(try adding([1, 2]))
        #expect(two.count == 2)
        let error = #expect(throws: DirectoryError.self) { try two.applying(try adding([3])) } // 300 bytes > 250
        #expect(error?.name == "MaximumEntriesExceeded")
        #expect(error?.message.contains("bytes of labels") == true, "\(String(describing: error))")
        #expect(two.identificationPairs.count == 2)
        let swap = try adding([3])
        try swap.removeIdentification([1])
        #expect(try two.applying(swap).count == 2)
        #expect(DirectoryLimits.maximumDirectoryLabelBytes == 256 << 20)
    }

    @Test func theMaximumIs20Million() {
        #expect(DirectoryUpdate(kind: .complete).maximumEntries == 20_000_000)
        #expect(DirectoryLimits.maximumLabelBytes == 256)
    }

    @Test func aFinishedUpdateRefusesEverything() throws {
        let update = DirectoryUpdate(kind: .incremental)
        try update.addBlocking([1])
        update.cancel()
        #expect(errorName { try update.addBlocking([2]) } == "InvalidArgs")
        #expect(errorName { _ = try Directory.empty.applying(update) } == "InvalidArgs")
    }

    @Test func errorNamesAreTheAPIs() {
        let names = [
            DirectoryError.entriesOutOfOrder(""), .duplicateEntries(""), .maximumEntriesExceeded(""),
            .unexpectedIncrementalRemoval(""), .currentlyLoading(""), .invalidArguments(""),
        ].map(\.name)
        #expect(names == ["EntriesOutOfOrder", "DuplicateEntries", "MaximumEntriesExceeded",
                          "UnexpectedIncrementalRemoval", "CurrentlyLoading", "InvalidArgs"])
    }

    @Test func anErrorInTheMiddleOfAMillionEntryUpdateLeavesTheOldDirectoryWorking() throws {
        let old = try Directory.make(blocking: [5, 7], identification: [(5, "five")])
        let update = DirectoryUpdate(kind: .complete)
        let batch = 100_000
        for start in stride(from: 0, to: 500_000, by: batch) {
            try update.addBlocking((start..<(start + batch)).map { Int64($0 * 2 + 1_000) })
        }
        // The sixth batch repeats a number in its middle: the update's call fails...
        var bad = (500_000..<600_000).map { Int64($0 * 2 + 1_000) }
        bad[50_000] = bad[49_999]
        #expect(errorName { try update.addBlocking(bad) } == "DuplicateEntries")
        #expect(old.isBlocked(5) && old.label(for: 5) == "five" && !old.isBlocked(1_000))
        // ...and one that breaks the maximum when applied leaves it working as well.
        let big = DirectoryUpdate(kind: .incremental, maximumEntries: 1_000_001)
        for start in stride(from: 0, to: 1_000_000, by: batch) {
            try big.addBlocking((start..<(start + batch)).map { Int64($0 * 2 + 1_000) })
        }
        #expect(errorName { _ = try old.applying(big) } == "MaximumEntriesExceeded")
        #expect(old.blockingEntries == [5, 7] && old.label(for: 5) == "five")
    }

    @Test func aFailedMillionEntryCompleteLeavesTheSavedDirectoryWorking() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path, maximumEntries: 1_000_000)
        try store.save(try .make(blocking: [5, 7], identification: [(5, "five")]), providerName: "P")
        let update = try store.beginUpdate(providerName: "P", kind: .incremental)
        for start in stride(from: 0, to: 1_000_000, by: 100_000) {
            let numbers = (start..<(start + 100_000)).map { Int64($0 * 2 + 1_000) }
            if start == 500_000 {
                #expect(errorName { try update.addBlocking(numbers.reversed()) } == "EntriesOutOfOrder")
            }
            try update.addBlocking(numbers)
        }
        #expect(errorName { try store.completeUpdate(providerName: "P") } == "MaximumEntriesExceeded") // 1,000,002 > 1,000,000
        for answers in [store, try DirectoryStore(folder: folder.path)] {
            #expect(answers.isBlocked(5) && answers.isBlocked(7) && !answers.isBlocked(1_000))
            #expect(answers.label(for: 5) == "five")
            #expect(answers.list().map(\.blockingCount) == [2])
        }
    }

    @Test func storeAllowsOneOpenUpdatePerProvider() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let update = try store.beginUpdate(providerName: "Acme", kind: .complete)
        #expect(errorName { _ = try store.beginUpdate(providerName: "Acme", kind: .incremental) } == "CurrentlyLoading")
        _ = try store.beginUpdate(providerName: "Other", kind: .complete)
        try update.addBlocking([14085555555])
        try store.completeUpdate(providerName: "Acme")
        #expect(store.isBlocked(14085555555))
        // Cancel (or a disconnect) changes nothing.
        let next = try store.beginUpdate(providerName: "Acme", kind: .complete)
        try next.addBlocking([1])
        store.cancelUpdate(providerName: "Acme")
        #expect(store.isBlocked(14085555555) && !store.isBlocked(1))
        #expect(errorName { try store.completeUpdate(providerName: "Acme") } == "InvalidArgs")
        // An error at Complete closes the update and changes nothing.
        let failing = try DirectoryStore(folder: folder.path, maximumEntries: 1)
        let tooBig = try failing.beginUpdate(providerName: "Acme", kind: .incremental)
        try tooBig.addBlocking([2])
        #expect(errorName { try failing.completeUpdate(providerName: "Acme") } == "MaximumEntriesExceeded")
        #expect(failing.openUpdate(providerName: "Acme") == nil)
        #expect(try DirectoryStore(folder: folder.path).load(providerName: "Acme").blockingEntries == [14085555555])
    }
}
