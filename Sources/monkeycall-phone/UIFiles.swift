import FoundationEssentials

/// Where the `.ui` files are: `MONKEYCALL_PHONE_UI_DIR`, else `share/monkeycall/phone` beside the
/// program's `bin` (an install), else the source folder (a build). Not SwiftPM's resources: their
/// accessor imports Foundation, and with it ICU's 38 MB (issue 44).
enum UIFiles {
    static let directory: String = {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["MONKEYCALL_PHONE_UI_DIR"], !given.isEmpty { return given }
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [program.deletingLastPathComponent().appendingPathComponent("share/monkeycall/phone/ui"),
                          URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ui")]
        return (candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("main-window.ui").path) }
                ?? candidates[0]).path
    }()

    static func path(_ name: String) -> String { directory + "/" + name }
}
