import Foundation
import Testing
@testable import TelephonyCore

@Suite struct ManualClockTests {
    @Test func runsDueTasksInTimeOrderAndSetsNow() {
        let clock = ManualClock(now: 1_000)
        var ran: [(String, UInt64)] = []
        _ = clock.schedule(after: 2) { ran.append(("b", clock.now)) }
        _ = clock.schedule(after: 1) { ran.append(("a", clock.now)) }
        _ = clock.schedule(after: 5) { ran.append(("c", clock.now)) }
        clock.advance(by: 1.999)
        #expect(ran.map(\.0) == ["a"])
        #expect(ran[0].1 == 1_000 + 1_000_000)
        clock.advance(by: 0.001)
        #expect(ran.map(\.0) == ["a", "b"])
        #expect(clock.now == 1_000 + 2_000_000)
        clock.advance(by: 10)
        #expect(ran.map(\.0) == ["a", "b", "c"])
        #expect(clock.now == 1_000 + 12_000_000)
    }

    @Test func cancelledTasksDoNotRunAndTiesKeepOrder() {
        let clock = ManualClock(now: 0)
        var ran: [Int] = []
        let task = clock.schedule(after: 1) { ran.append(0) }
        _ = clock.schedule(after: 1) { ran.append(1) }
        _ = clock.schedule(after: 1) { ran.append(2) }
        task.cancel()
        #expect(clock.pendingTaskCount == 2)
        clock.advance(by: 1)
        #expect(ran == [1, 2])
        #expect(clock.pendingTaskCount == 0)
    }

    @Test func tasksScheduledWhileAdvancingRunIfDue() {
        let clock = ManualClock(now: 0)
        var ran: [UInt64] = []
        _ = clock.schedule(after: 1) {
            ran.append(clock.now)
            _ = clock.schedule(after: 1) { ran.append(clock.now) }
            _ = clock.schedule(after: 10) { ran.append(clock.now) }
        }
        clock.advance(by: 3)
        #expect(ran == [1_000_000, 2_000_000])
    }

    @Test func dispatchClockRunsOnItsQueueAndCancels() async {
        let queue = DispatchQueue(label: "test.clock")
        let onQueue = OnQueue(DispatchClock(queue: queue))
        let before = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(onQueue.clock.now >= before - 1_000_000)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async {
                let clock = onQueue.clock
                let cancelled = clock.schedule(after: 0.01) { Issue.record("cancelled task ran") }
                cancelled.cancel()
                _ = clock.schedule(after: 0.05) {
                    dispatchPrecondition(condition: .onQueue(queue))
                    done.resume()
                }
            }
        }
    }

    @Test("a cancelled DispatchClock task lets go of its closure at once, not at its deadline")
    func dispatchClockReleasesCancelledTasks() async {
        final class Payload: Sendable {}
        let queue = DispatchQueue(label: "test.clock.release")
        let onQueue = OnQueue(DispatchClock(queue: queue))
        weak var released: Payload?
        queue.sync {
            let clock = onQueue.clock
            let payload = Payload()
            released = payload
            clock.schedule(after: 3600) { _ = payload }.cancel()
        }
        // libdispatch drops a cancelled source's handler on its queue: give it a few turns.
        let deadline = ContinuousClock.now + .seconds(5)
        while queue.sync(execute: { released != nil }), ContinuousClock.now < deadline { await Task.yield() }
        #expect(released == nil)
    }

    @Test("DispatchClock's one timer: a sooner task scheduled after a later one runs first, tasks scheduled by a task run, cancelled ones never, a deadline past any time is taken; none pending at the end")
    func dispatchClockOrdersTasks() async {
        let queue = DispatchQueue(label: "test.clock.order")
        let onQueue = OnQueue(DispatchClock(queue: queue))
        let ran = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            queue.async {
                let clock = onQueue.clock
                var ran: [String] = []
                // Deadlines past any time arm the timer (a timerfd) without trapping.
                let far = clock.schedule(after: .greatestFiniteMagnitude) { ran.append("far") }
                _ = clock.schedule(after: 0.3) {
                    ran.append("late")
                    far.cancel()
                    done.resume(returning: ran)
                }
                let cancelled = clock.schedule(after: 0.01) { ran.append("cancelled") }
                _ = clock.schedule(after: 0.05) {
                    ran.append("soon")
                    _ = clock.schedule(after: 0.05) { ran.append("from a task") }
                }
                cancelled.cancel()
                // Many cancelled entries, to make the clock drop them from its heap.
                for _ in 0..<200 { clock.schedule(after: 10) { ran.append("cancelled") }.cancel() }
                #expect(clock.pendingTaskCount == 3)
            }
        }
        #expect(ran == ["soon", "from a task", "late"])
        #expect(queue.sync { onQueue.clock.pendingTaskCount } == 0)
    }
}

/// A `DispatchClock` for a test that touches it only on its queue (and reads `now`, which is the
/// system's), which the compiler cannot see.
private struct OnQueue: @unchecked Sendable {
    let clock: DispatchClock
    init(_ clock: DispatchClock) { self.clock = clock }
}
