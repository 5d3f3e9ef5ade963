import Foundation

/// Where the `.ui` files are: `MONKEYCALL_PHONE_UI_DIR`, else beside the program (SwiftPM's
/// resource folder in a build), else `share/monkeycall/phone` beside its `bin` (an install).
enum UIFiles {
    static let directory: String = {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["MONKEYCALL_PHONE_UI_DIR"], !given.isEmpty { return given }
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [program.appendingPathComponent("MonkeyCall_monkeycall-phone.resources/ui"),
                          program.deletingLastPathComponent().appendingPathComponent("share/monkeycall/phone/ui")]
        return (candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("main-window.ui").path) }
                ?? candidates[1]).path
    }()

    static func path(_ name: String) -> String { directory + "/" + name }
}
