import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for the `monkeycall-contacts` helper, for the tests of its faults (issue 53): a shell
/// script in a folder of its own that adds a byte to `PATH.starts` at each start, then does what
/// its body says: exit at once, fail to load libebook, die in the middle of a line, never answer…
/// The folder goes at deinit.
public final class FakeContactsHelper: @unchecked Sendable {
    public let folder: String
    public let path: String

    public init(_ body: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-fake-helper-\(UUID().uuidString.prefix(8))").path
        path = folder + "/monkeycall-contacts"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try replace(with: body)
    }

    deinit {
        // A helper that never answers outlives a test that failed before stopping its address book:
        // ended here, if that pid is still its `sleep`.
        if let pid, let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.hasPrefix("sleep\0") {
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Writes the script anew (another file renamed into place, as a package installs it: no
    /// descriptor of it is open for writing when it is run).
    public func replace(with body: String) throws {
        let temporary = URL(fileURLWithPath: folder + "/.helper-\(UUID().uuidString).tmp")
        try writeClosingOnExec("#!/bin/sh\nprintf x >> '\(path).starts'\n\(body)\n", to: temporary, mode: 0o755)
        guard rename(temporary.path, path) == 0 else { throw TestSupportError("cannot rename \(temporary.path): errno \(errno)") }
    }

    /// How many times it was started.
    public var starts: Int { (try? Data(contentsOf: URL(fileURLWithPath: path + ".starts")))?.count ?? 0 }

    /// The pid it wrote to `PATH.pid` (the `neverAnswers` body does).
    public var pid: Int32? {
        (try? String(contentsOfFile: path + ".pid", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Waits until it was started at least `count` times.
    public func waitForStarts(_ count: Int, timeout: Duration = .seconds(30)) async -> Bool {
        await Self.waitUntil(timeout: timeout) { self.starts >= count }
    }

    /// Checks `condition` every 10 ms until it holds (true) or the deadline passes (false).
    public static func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + Deadlines.stretched(timeout)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    // MARK: Bodies

    /// Exits at once, status 1.
    public static let exitsAtOnce = "exit 1"
    /// What the loader does when libebook is not installed: its error on stderr, status 127.
    public static let cannotLoad = """
        echo "$0: error while loading shared libraries: libebook-1.2.so.21: cannot open shared object file: No such file or directory" >&2
        exit 127
        """
    /// Status 127 and nothing said.
    public static let exits127Silently = "exit 127"
    /// The loader's error on stderr, then another status.
    public static let loaderErrorThenStatus1 = """
        echo "$0: error while loading shared libraries: libebook-1.2.so.21: cannot open shared object file: No such file or directory" >&2
        exit 1
        """
    /// A whole contact (Ada Whole, +44 20 7946 0990), half of the next line, then SIGKILL.
    public static let diesMidReply = """
        printf 'eds\\tup\\nset\\tbook\\tuid-1\\tAda Whole\\t+44 20 7946 0990\\nset\\tbook\\tuid-2\\tHalf Writ'
        kill -KILL $$
        """
    /// Reads nothing, writes nothing, never ends; its pid in `PATH.pid`.
    public static let neverAnswers = """
        echo $$ > "$0.pid"
        exec sleep 100000
        """
    /// Crashes at once (SIGSEGV), leaving no core file.
    public static let crashes = "ulimit -c 0\nkill -SEGV $$"
    /// Random bytes, then exits: 64 KiB (about 250 lines of random bytes) a start: under the whole suite on 2 cores, 1 MiB a
    /// start (4,000 lines, each read, refused and logged by a debug daemon) took about 15 s, and 5
    /// starts missed their 60 s (scripts/helper-faults sends 4 MiB to the release daemon).
    public static let writesGarbage = "head -c 65536 /dev/urandom\nexit 0"
    /// 2 MB without a line's end, then waits: taken for broken and killed. Its pid in `PATH.pid`.
    public static let writesEndlessLine = "echo $$ > \"$0.pid\"\nhead -c 2000000 /dev/zero | tr '\\0' x\nexec sleep 100000"

    /// A helper that works: one contact in book `book`, the book ready, then it waits for its stdin to end.
    public static func works(name: String, number: String) -> String {
        "printf 'eds\\tup\\nset\\tbook\\tuid-1\\t%s\\t%s\\nready\\tbook\\n' '\(name)' '\(number)'\nexec cat > /dev/null"
    }
}
