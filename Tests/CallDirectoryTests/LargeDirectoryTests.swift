import Foundation
import Testing
@testable import CallDirectory

@Suite struct CallDirectoryLargeTests {
    /// 10,000,000 blocking and 10,000,000 identification entries, the maximum.
    /// Run with MONKEYCALL_LARGE=1 (needs about 1.5 GB of memory and disk).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MONKEYCALL_LARGE"] == "1"))
    func twentyMillionEntries() throws {
        let folder = TemporaryFolder()
        let store = try DirectoryStore(folder: folder.path)
        let update = try store.beginUpdate(providerName: "Twenty Million", kind: .complete)
        let perKind = 10_000_000
        let batch = 100_000
        func number(_ index: Int) -> Int64 { Int64(10_000_000_000 + index * 7) }
        let add = try seconds {
            for start in stride(from: 0, to: perKind, by: batch) {
                let numbers = (start..<(start + batch)).map(number)
                try update.addBlocking(numbers)
                try update.addIdentification(numbers, labels: numbers.map { "C\($0 % 100_000)" })
            }
        }
        #expect(errorName { try update.addBlocking([number(perKind)]) } == "MaximumEntriesExceeded")
        var saved = Directory.empty
        let complete = try seconds { saved = try store.completeUpdate(providerName: "Twenty Million") }
        #expect(saved.count == 20_000_000)
        saved = .empty
        var loaded = Directory.empty
        let load = try seconds { loaded = try DirectoryStore(folder: folder.path).load(providerName: "Twenty Million") }
        var hits = 0
        let first = seconds { if loaded.isBlocked(number(perKind / 2)) { hits += 1 } }
        let lookups = 1_000_000
        let lookup = seconds {
            for index in 0..<lookups where loaded.isBlocked(number(index &* 7_919 % perKind)) { hits += 1 }
        }
        let labels = seconds {
            for index in 0..<lookups where loaded.label(for: number(index &* 7_919 % perKind)) != nil { hits += 1 }
        }
        #expect(hits == 2 * lookups + 1)
        #expect(loaded.label(for: number(1234)) == "C\(number(1234) % 100_000)")
        let verify = try seconds { try loaded.verify() }
        print("""
            20M entries: add \(add)s, apply+save \(complete)s, load \(load * 1000) ms, \
            first lookup \(first * 1e6) µs, isBlocked \(lookup / Double(lookups) * 1e9) ns, \
            label \(labels / Double(lookups) * 1e9) ns, verify \(verify)s
            """)
    }
}
