import DBusTestSupport
import Dispatch
import Foundation
import GRDB
import Testing
@testable import CallHistory

/// The database's executor against a real lock: a second SQLite connection to
/// the same file holds its write lock (`BEGIN EXCLUSIVE`) as another process would.
@Suite("HistoryQueue: writes that meet a lock wait, in order, within a bound")
struct HistoryQueueTests {
    /// A database, its queue (tries every 5–50 ms) and what its completions report, in order.
    final class Fixture: Sendable {
        let path = CallHistoryTests.temporaryPath()
        let history: CallHistory
        let queue: HistoryQueue
        let events = EventBuffer<String>()
        let locker: DatabaseQueue

        init(capacity: Int = 10_000, patience: Double = 2) throws {
            history = try CallHistory(path: path, busyTimeout: 0.02)
            let events = self.events
            queue = HistoryQueue(history: history, delivery: DispatchQueue(label: "test.delivery"), capacity: capacity, patience: patience,
                                 firstBackoff: 0.005, maximumBackoff: 0.05) { events.append($0 ? "waiting" : "flowing") }
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true // the lock outlives each use of the connection
            locker = try DatabaseQueue(path: path, configuration: configuration)
        }

        func lock() throws { try locker.inDatabase { try $0.execute(sql: "BEGIN EXCLUSIVE") } }
        func unlock() throws { try locker.inDatabase { try $0.execute(sql: "COMMIT") } }

        func record(_ handle: String) {
            let entry = CallHistoryTests.entry(handle, .missed, endedAt: 1000)
            queue.write(.entry, { try $0.record(entry) }) { [events] result in
                switch result {
                case .success: events.append("recorded \(handle)")
                case .failure(let error as HistoryQueue.EntryDropped): events.append("dropped \(handle) (\(error.total))")
                case .failure(let error): events.append("failed \(handle): \(error)")
                }
            }
        }

        func clear() {
            queue.write(.request, { try $0.clearRecents() }) { [events] result in
                switch result {
                case .success: events.append("cleared")
                case .failure(let error): events.append(HistoryQueue.isBusy(error) ? "clear gave up: busy" : "clear failed: \(error)")
                }
            }
        }

        /// The next `count` events.
        func next(_ count: Int) async -> [String] {
            var seen: [String] = []
            for _ in 0..<count { seen.append(await events.next() ?? "nothing within 10 s") }
            return seen
        }
    }

    @Test("entries that meet another connection's lock are written once it goes, in the order they came; reads answer meanwhile")
    func writtenAfterTheLock() async throws {
        let f = try Fixture()
        try f.lock()
        for handle in ["a", "b", "c"] { f.record(handle) }
        #expect(await f.next(1) == ["waiting"])
        // The queue is free between tries: a read answers while the entries wait.
        #expect(try await f.queue.read { try $0.recentsCount() } == 0)
        #expect(await f.queue.waitingCount() == 3)

        try f.unlock()
        #expect(await f.next(4) == ["recorded a", "recorded b", "recorded c", "flowing"])
        // Same end time: newest first is by id, the order they were written.
        #expect(try f.history.recents(limit: 10).map(\.handle) == ["c", "b", "a"])
        #expect(await f.queue.waitingCount() == 0)
    }

    @Test("at the bound the oldest waiting entry is dropped, with a count; the newest are written")
    func boundDropsTheOldest() async throws {
        let f = try Fixture(capacity: 3)
        try f.lock()
        for handle in ["a", "b", "c", "d", "e"] { f.record(handle) }
        #expect(await f.next(3) == ["waiting", "dropped a (1)", "dropped b (2)"])
        #expect(await f.queue.waitingCount() == 3)

        try f.unlock()
        #expect(await f.next(4) == ["recorded c", "recorded d", "recorded e", "flowing"])
        #expect(try f.history.recents(limit: 10).map(\.handle) == ["e", "d", "c"])
    }

    @Test("a request waits behind the entries before it and gives up after its patience; entries never do")
    func requestsKeepTheOrderAndGiveUp() async throws {
        // Long enough that a loaded machine still unlocks before the second Clear gives up.
        let f = try Fixture(patience: 1.5)
        try f.lock()
        f.record("a")
        f.clear()
        #expect(await f.next(2) == ["waiting", "clear gave up: busy"])
        #expect(await f.queue.waitingCount() == 1)

        // Unlocked before its patience runs out, a Clear behind a waiting entry clears it too.
        f.clear()
        try f.unlock()
        // "flowing" (no entry waits any more) and the Clear's answer come in either order.
        let afterUnlock = await f.next(3)
        #expect(afterUnlock.first == "recorded a" && Set(afterUnlock.dropFirst()) == ["cleared", "flowing"], "\(afterUnlock)")
        #expect(try f.history.recentsCount() == 0)
    }

    @Test("errors other than a lock are not tried again")
    func otherErrorsAreNotRetried() async throws {
        let f = try Fixture()
        f.queue.write(.entry, { _ in throw DatabaseError(resultCode: .SQLITE_READONLY) }) { [events = f.events] result in
            if case .failure(let error as DatabaseError) = result { events.append("failed: \(error.resultCode)") }
        }
        f.record("after")
        #expect(await f.next(2) == ["failed: \(ResultCode.SQLITE_READONLY)", "recorded after"])
    }
}
