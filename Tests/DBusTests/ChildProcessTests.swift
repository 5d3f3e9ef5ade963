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

    /// A descriptor opened without close-on-exec (by a library, or by another thread in the moment
    /// before it sets the flag) must not live on in a child: one did once, a loopback port bound by
    /// a test checking it was free, held for the child's whole life, and the baresip given that port
    /// could not start ("Address already in use").
    @Test("a child holds none of its parent's descriptors: a pipe opened without close-on-exec still ends when the parent closes it")
    func inheritsNoDescriptors() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let child = try ChildProcess("/bin/sleep", ["30"])
        defer { child.kill() }
        close(ends[1])
        // End of file is readable at once; were the child holding the write end, nothing would come.
        var descriptor = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 10_000)
        #expect(ready == 1, "the child \(child.pid) holds the pipe's write end")
        var byte: UInt8 = 0
        if ready == 1 { #expect(read(ends[0], &byte, 1) == 0) }
        #expect(child.isRunning)
    }
}
