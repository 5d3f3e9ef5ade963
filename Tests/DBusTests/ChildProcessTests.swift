import DBusTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The processes tests start die with the test process: nothing is left for
/// scripts/test to kill by name.
@Suite("Child processes of the tests")
struct ChildProcessTests {
    @Test("a child runs with SIGKILL as its parent-death signal")
    func parentDeathSignal() async throws {
        // prctl(PR_GET_PDEATHSIG) from inside the child.
        let script = "import ctypes; s = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)"
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(SIGKILL)")
    }

    @Test("a child outlives the thread that asked for it: the signal comes when the process ends, not that thread")
    func outlivesItsThread() async throws {
        final class Box: @unchecked Sendable { var child: ChildProcess?; var error: (any Error)? }
        let box = Box()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeUnretainedValue()
            do { box.child = try ChildProcess("/bin/sleep", ["600"]) } catch { box.error = error }
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        try #require(started == 0)
        pthread_join(thread, nil)
        if let error = box.error { throw error }
        let child = try #require(box.child)
        defer { child.kill() }
        // The kernel sends the parent-death signal as the thread exits, moments after the join returns.
        #expect(await child.waitForExit(timeout: .milliseconds(500)) == nil, "the child died with the thread that started it")
        #expect(child.isRunning)
    }

    @Test("a program that cannot be started is an error at once")
    func missingProgram() {
        #expect(throws: TestSupportError.self) { try ChildProcess("/nonexistent/program", []) }
    }
}
