import Foundation
import Synchronization

/// Folders that a test process keeps for as long as it runs, shared by its tests (the compiled
/// catalogs, the one evolution-data-server's home and bus), removed when it exits: a test run
/// leaves nothing in the temporary folder.
public enum RemovedAtExit {
    private static let folders = Mutex<[String]>([])
    private static let hook: Void = {
        atexit {
            for folder in RemovedAtExit.folders.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: folder) }
        }
    }()

    /// `path` is removed, with all it holds, when the process exits.
    public static func add(_ path: String) {
        _ = hook
        folders.withLock { $0.append(path) }
    }
}
