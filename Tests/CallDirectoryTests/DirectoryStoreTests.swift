import Foundation
import Testing
@testable import CallDirectory

@Suite struct CallDirectoryStoreTests {
    @Test func persistenceAcrossStores() throws {
        let folder = TemporaryFolder()
        do {
            let store = try DirectoryStore(folder: folder.path)
            let saved = try store.save(
                try .make(blocking: [14085550000, 14085555555], identification: [(442079460000, "Met Office"), (14085551234, "Pizza")].sorted { $0.0 < $1.0 }),
                providerName: "Acme VoIP")
            #expect(saved.isMapped)
            try store.save(try .make(blocking: [1]), providerName: "Ünïcode/../name")
            try store.setEnabled(false, providerName: "Ünïcode/../name")
        }
        let store = try DirectoryStore(folder: folder.path)
        #expect(store.problems.isEmpty)
        let acme = try store.load(providerName: "Acme VoIP")
        #expect(acme.isMapped)
        #expect(acme.blockingEntries == [14085550000, 14085555555])
        #expect(acme.identificationPairs == ["14085551234=Pizza", "442079460000=Met Office"])
        #expect(store.isBlocked(14085555555))
        #expect(store.label(for: 442079460000) == "Met Office")
        #expect(!store.isBlocked(1)) // Disabled.
        #expect(store.list() == [
            DirectorySummary(name: "Acme VoIP", enabled: true, blockingCount: 2, identificationCount: 2),
            DirectorySummary(name: "Ünïcode/../name", enabled: false, blockingCount: 1, identificationCount: 0),
        ])
        // File names are safe: hex of the name, nothing else in the folder but the flags.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == ["41636d6520566f4950.mcdir", "c39c6ec3af636f64652f2e2e2f6e616d65.mcdir", "enabled.json"])
        try store.setEnabled(true, providerName: "Ünïcode/../name")
        #expect(try DirectoryStore(folder: folder.path).isBlocked(1))
    }

    @Test("a mapped directory is unmapped on a queue of its own, not on the thread that lets it go (the service queue at times: the last unmapping of a replaced 139 MB file held it 15–30 ms)")
    func unmappedOffTheThreadThatLetsItGo() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: [14085550000]), providerName: "Small")
        let path = folder.path + "/" + DirectoryFile.fileName(for: "Small")
        func mappings() -> Int { Self.processMaps().split(separator: "\n").filter { $0.hasSuffix(path) }.count }
        var loaded: Directory? = try #require(try DirectoryFile.load(path: path)).directory
        #expect(loaded != nil && mappings() == 2, "the store's and this one")
        MappingRelease.queue.suspend()
        loaded = nil
        #expect(mappings() == 2, "let go of here, not unmapped here")
        MappingRelease.queue.resume()
        MappingRelease.queue.sync {}
        #expect(mappings() == 1)
    }

    @Test("a mapped directory holds its file open (its intact check is an fstat of it) and closes it after its mapping: 20 saves over one provider's directory leave one descriptor on its file")
    func descriptorsGoWithTheirMappings() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let path = folder.path + "/" + DirectoryFile.fileName(for: "Saved")
        // A replaced file still open reads as "<path> (deleted)".
        func descriptors() -> Int {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
                .filter { $0.hasPrefix(path) }.count
        }
        for round in 0..<20 {
            #expect(try store.save(try .make(blocking: [14085550000 + Int64(round)]), providerName: "Saved").isMapped)
        }
        MappingRelease.queue.sync {}
        #expect(descriptors() == 1)
        #expect(store.isBlocked(14085550019) && !store.isBlocked(14085550018))
    }

    /// `/proc/self/maps` (read to its end: it says its size is 0).
    static func processMaps() -> String {
        let fd = open("/proc/self/maps", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var text: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
        while case let count = read(fd, &chunk, chunk.count), count > 0 { text += chunk[0..<count] }
        return String(decoding: text, as: UTF8.self)
    }

    @Test("a directory removed is gone from lookups at once and from the folder once the removal runs; not while an update is open")
    func removal() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: [14085550000], identification: [(14085551234, "Pizza")]), providerName: "Pizza")
        try store.setEnabled(false, providerName: "Other")
        _ = try store.beginUpdate(providerName: "Pizza", kind: .complete)
        #expect(throws: DirectoryError.self) { try store.beginRemoval(providerName: "Pizza") }
        store.cancelUpdate(providerName: "Pizza")

        let removal = try store.beginRemoval(providerName: "Pizza")
        #expect(!store.isBlocked(14085550000) && store.label(for: 14085551234) == nil)
        #expect(store.list().map(\.name) == ["Other"])
        try removal.run()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["enabled.json"])
        let reopened = try DirectoryStore(folder: folder.path)
        #expect(reopened.list().map(\.name) == ["Other"])
        #expect(throws: DirectoryError.invalidArguments("There is no call directory of Pizza.")) { try reopened.beginRemoval(providerName: "Pizza") }
        // A flag alone is a directory to the user (listed, disabled): it goes too.
        try reopened.beginRemoval(providerName: "Other").run()
        let third = try DirectoryStore(folder: folder.path)
        #expect(reopened.list().isEmpty && third.list().isEmpty)
    }

    @Test func incrementalUpdateOfASavedDirectory() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: [1, 2, 3], identification: [(1, "a"), (2, "b")]), providerName: "P")
        let reopened = try DirectoryStore(folder: folder.path)
        let update = try reopened.beginUpdate(providerName: "P", kind: .incremental)
        try update.removeBlocking([2])
        try update.addBlocking([4])
        try update.addIdentification([3], labels: ["c"])
        let result = try reopened.completeUpdate(providerName: "P") // Merges from the mapped file.
        #expect(result.blockingEntries == [1, 3, 4])
        #expect(result.identificationPairs == ["1=a", "2=b", "3=c"])
        let third = try DirectoryStore(folder: folder.path)
        #expect(try third.load(providerName: "P").identificationPairs == ["1=a", "2=b", "3=c"])
    }

    @Test("a completion runs on another thread: the directory answers as it was until it is installed; a new update meanwhile is CurrentlyLoading")
    func completionOffTheOwnersExecutor() async throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: [1, 2]), providerName: "P")
        let update = try store.beginUpdate(providerName: "P", kind: .incremental)
        try update.removeBlocking([1])
        try update.addBlocking([3])
        let completion = try store.beginCompletion(providerName: "P")
        #expect(store.openUpdate(providerName: "P") == nil)
        #expect(errorName { _ = try store.beginUpdate(providerName: "P", kind: .complete) } == "CurrentlyLoading")

        let result = await Task.detached { Result { () throws(DirectoryError) in try completion.run() } }.value
        // Saved, but not yet the store's: lookups answer as before.
        #expect(store.isBlocked(1) && !store.isBlocked(3))
        let (installed, replaced) = try store.finishCompletion(completion, result)
        #expect(installed.isMapped && installed.blockingEntries == [2, 3])
        #expect(replaced?.blockingEntries == [1, 2])
        #expect(!store.isBlocked(1) && store.isBlocked(3))
        #expect(try DirectoryStore(folder: folder.path).load(providerName: "P").blockingEntries == [2, 3])
        _ = try store.beginUpdate(providerName: "P", kind: .complete)

        // A failed completion leaves the directory as it was, and the provider free to begin again.
        store.cancelUpdate(providerName: "P")
        let failing = try store.beginUpdate(providerName: "P", kind: .complete)
        try failing.addBlocking([10])
        let second = try store.beginCompletion(providerName: "P")
        #expect(errorName { _ = try store.finishCompletion(second, .failure(.storageFailed("disk full"))) } == "Failed")
        #expect(store.isBlocked(3) && !store.isBlocked(10))
        _ = try store.beginUpdate(providerName: "P", kind: .complete)
    }

    @Test("a flag changes at once and is written elsewhere; a failed write is undone unless changed again since")
    func enabledFlagsWrittenElsewhere() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: [1]), providerName: "P")
        let off = try store.changeEnabled(false, providerName: "P")
        #expect(!store.isBlocked(1))
        try off.run()
        #expect(try !DirectoryStore(folder: folder.path).isEnabled(providerName: "P"))
        let on = try store.changeEnabled(true, providerName: "P")
        store.undo(on) // as when its write failed
        #expect(!store.isEnabled(providerName: "P"))
        let again = try store.changeEnabled(true, providerName: "P")
        let offAgain = try store.changeEnabled(false, providerName: "P")
        store.undo(again) // replaced since: stays off
        #expect(!store.isEnabled(providerName: "P"))
        _ = offAgain
    }

    @Test func longNamesGetAHashedFileNameAndEmptyDirectoriesSave() throws {
        let folder = TemporaryFolder()
        let name = String(repeating: "Ω", count: 64)
        let store = try DirectoryStore(folder: folder.path)
        try store.save(.empty, providerName: name)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        #expect(file.hasPrefix("h") && file.count < 64)
        let again = try DirectoryStore(folder: folder.path)
        #expect(again.list() == [DirectorySummary(name: name, enabled: true, blockingCount: 0, identificationCount: 0)])
        #expect(try again.load(providerName: name).count == 0)
        #expect(try again.load(providerName: "never saved").count == 0)
        #expect(errorName { _ = try again.load(providerName: "") } == "InvalidArgs")
    }

    /// Saves a directory and returns its file's path.
    func savedFile(in folder: TemporaryFolder) throws -> String {
        let store = try DirectoryStore(folder: folder.path)
        try store.save(try .make(blocking: Array(1...1000), identification: (1...1000).map { ($0, "label \($0)") }), providerName: "P")
        return folder.path + "/" + DirectoryFile.fileName(for: "P")
    }

    func rewrite(_ path: String, _ change: (inout Data) -> Void) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        change(&data)
        try data.write(to: URL(fileURLWithPath: path))
    }

    @Test(arguments: [0, 1, 127, 128, 5000, 20_000])
    func truncatedFilesAreErrors(length: Int) throws {
        let folder = TemporaryFolder()
        let path = try savedFile(in: folder)
        try rewrite(path) { $0 = $0.prefix(length) }
        let store = try DirectoryStore(folder: folder.path)
        #expect(store.problems.values.map(\.name) == ["CorruptDirectory"])
        #expect(store.list().isEmpty)
        let error = #expect(throws: DirectoryError.self) { try store.load(providerName: "P") }
        #expect(error?.message.contains("truncated") == true)
    }

    @Test(arguments: [0, 8, 16, 40, 100, 120])
    func corruptedHeadersAreErrors(byte: Int) throws {
        let folder = TemporaryFolder()
        let path = try savedFile(in: folder)
        try rewrite(path) { $0[byte] ^= 0x40 }
        let store = try DirectoryStore(folder: folder.path)
        #expect(errorName { _ = try store.load(providerName: "P") } == "CorruptDirectory")
        #expect(!store.isBlocked(1))
        // The next save replaces the broken file.
        try store.save(try .make(blocking: [1]), providerName: "P")
        #expect(try DirectoryStore(folder: folder.path).isBlocked(1))
    }

    @Test func corruptedEntriesLoadButFailVerification() throws {
        let folder = TemporaryFolder()
        let path = try savedFile(in: folder)
        #expect(throws: Never.self) { try DirectoryStore(folder: folder.path).load(providerName: "P").verify() }
        try rewrite(path) { $0[$0.count - 3] ^= 1 } // A label byte.
        let store = try DirectoryStore(folder: folder.path)
        let directory = try store.load(providerName: "P") // O(1): only the header is checked.
        #expect(directory.isBlocked(500))
        #expect(errorName { try directory.verify() } == "CorruptDirectory")
    }

    @Test func corruptedLabelOffsetsNeverCrash() throws {
        let folder = TemporaryFolder()
        let path = try savedFile(in: folder)
        // Write a huge offset in the middle of the label offsets.
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(128)
        let offsetsAt = header.withUnsafeBytes { Int($0.load(fromByteOffset: 10 * 8, as: UInt64.self)) }
        try rewrite(path) { data in
            for index in 0..<4 { data[offsetsAt + 500 * 4 + index] = 0xFF }
        }
        let directory = try #require(try DirectoryFile.load(path: path)).directory
        #expect(directory.label(for: 500) == "")
        #expect(directory.label(for: 501) == "")
        #expect(directory.label(for: 10) == "label 10")
        #expect(errorName { try directory.verify() } == "CorruptDirectory")
    }

    @Test func wideLabelOffsetsSaveLoadAndMerge() throws {
        let folder = TemporaryFolder()
        let update = DirectoryUpdate(kind: .complete)
        try update.addIdentification([1, 2, 3], labels: ["one", "", "three"])
        let wide = try Directory.empty.applying(update, wideOffsets: true)
        #expect(wide.storage.offsetWidth == 8)
        let store = try DirectoryStore(folder: folder.path)
        try store.save(wide, providerName: "W")
        let loaded = try DirectoryStore(folder: folder.path).load(providerName: "W")
        #expect(loaded.storage.offsetWidth == 8 && loaded.isMapped)
        #expect(loaded.identificationPairs == ["1=one", "2=", "3=three"])
        try loaded.verify()
        let more = DirectoryUpdate(kind: .incremental)
        try more.removeIdentification([1])
        try more.addIdentification([4], labels: ["four"])
        let merged = try loaded.applying(more)
        #expect(merged.storage.offsetWidth == 4)
        #expect(merged.identificationPairs == ["2=", "3=three", "4=four"])
    }

    @Test func identifyNormalisesAndLeftoverTemporaryFilesGo() throws {
        let folder = TemporaryFolder()
        FileManager.default.createFile(atPath: folder.path + "/.50.mcdir.123.456.tmp", contents: Data("partial".utf8))
        let store = try DirectoryStore(folder: folder.path)
        // Opening leaves them (they may be another instance's save in progress); its owner removes them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [".50.mcdir.123.456.tmp"])
        DirectoryStore.removeLeftoverTemporaryFiles(in: folder.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        try store.save(try .make(blocking: [14085555555], identification: [(14085555555, "Spam Likely")]), providerName: "P")
        #expect(store.identify(handle: "+1 (408) 555-5555") == ("Spam Likely", true))
        #expect(store.identify(handle: "tel:+14085555555") == ("Spam Likely", true))
        #expect(store.identify(handle: "alice@example.org") == (nil, false))
        #expect(store.identify(handle: "+1 408 555 5556") == (nil, false))
    }

    @Test func aCorruptedFlagsFileIsAnError() throws {
        let folder = TemporaryFolder()
        try Data("[1,2".utf8).write(to: URL(fileURLWithPath: folder.path + "/enabled.json"))
        #expect(errorName { _ = try DirectoryStore(folder: folder.path) } == "CorruptDirectory")
    }

    @Test func aMillionEntries() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let update = try store.beginUpdate(providerName: "Big", kind: .complete)
        var applied = Directory.empty
        let build = try seconds {
            for start in stride(from: 0, to: 500_000, by: 100_000) {
                let numbers = (start..<(start + 100_000)).map { Int64(33_000_000_000 + $0 * 3) }
                try update.addBlocking(numbers)
                try update.addIdentification(numbers, labels: numbers.map { "Caller \($0 % 1000)" })
            }
        }
        let apply = try seconds { applied = try Directory.empty.applying(try #require(store.openUpdate(providerName: "Big"))) }
        store.cancelUpdate(providerName: "Big")
        let save = try seconds { try store.save(applied, providerName: "Big") }
        var loaded = Directory.empty
        let load = try seconds { loaded = try DirectoryStore(folder: folder.path).load(providerName: "Big") }
        let lookups = 1_000_000
        var hits = 0
        let lookup = seconds {
            for index in 0..<lookups {
                let number = Int64(33_000_000_000 + (index &* 7919 % 500_000) * 3)
                if loaded.isBlocked(number) { hits += 1 }
            }
        }
        let labels = seconds {
            for index in 0..<100_000 where loaded.label(for: Int64(33_000_000_000 + index * 3)) != nil { hits += 1 }
        }
        #expect(hits == lookups + 100_000)
        #expect(loaded.label(for: 33_000_000_000 + 3 * 1234) == "Caller \((33_000_000_000 + 3 * 1234) % 1000)")
        print("1M entries: add \(build)s, apply \(apply)s, save \(save)s, load \(load)s, isBlocked \(lookup / Double(lookups) * 1e9) ns, label \(labels / 1e5 * 1e9) ns")
    }

    @Test("a directory file truncated or written in place under the store answers as absent, is reported once and is replaced by the next update (found on main: SIGBUS)",
          arguments: ["truncated", "written in place"])
    func fileChangedUnderTheStore(change: String) throws {
        let folder = TemporaryFolder()
        let labels = (1...20_000).map { (Int64($0) * 7, "Caller \($0)") }
        try DirectoryStore(folder: folder.path).save(try .make(blocking: Array(1...20_000), identification: labels), providerName: "P")
        let store = try DirectoryStore(folder: folder.path)
        var damage: [String] = []
        store.onDamage = { file, _ in damage.append(file) }
        #expect(store.isBlocked(19_999))
        #expect(store.label(for: 140_000) == "Caller 20000")
        let file = DirectoryFile.fileName(for: "P")
        let path = "\(folder.path)/\(file)"
        if change == "truncated" {
            #expect(truncate(path, 0) == 0)
        } else {
            // Same size, other bytes, as an editor saving in place would leave it.
            let fd = open(path, O_WRONLY)
            let garbage = [UInt8](repeating: 0xA5, count: 4096)
            #expect(pwrite(fd, garbage, garbage.count, 4096) == garbage.count)
            var times = [timespec(tv_sec: 1, tv_nsec: 0), timespec(tv_sec: 1, tv_nsec: 0)]
            #expect(futimens(fd, &times) == 0)
            close(fd)
        }
        for _ in 0..<3 {
            #expect(!store.isBlocked(19_999))
            #expect(store.label(for: 140_000) == nil)
            let identified = store.identify(handle: "+140000")
            #expect(identified.label == nil && !identified.blocked)
        }
        #expect(damage == [file])
        #expect(store.problems[file] != nil)
        if change == "truncated" {
            #expect(throws: DirectoryError.self) { try store.load(providerName: "P") }
        }

        // The next complete update replaces it.
        let update = try store.beginUpdate(providerName: "P", kind: .complete)
        try update.addBlocking([5])
        try store.completeUpdate(providerName: "P")
        #expect(store.isBlocked(5))
        #expect(!store.isBlocked(19_999))
        #expect(store.problems.isEmpty)
        #expect(try DirectoryStore(folder: folder.path).isBlocked(5))
    }

}
