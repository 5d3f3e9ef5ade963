import Foundation

/// The demo's log: one plain sentence a line, on standard output, at once.
enum Log {
    private static let lock = NSLock()

    static func say(_ text: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }
}
