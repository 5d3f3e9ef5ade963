import Foundation

/// An X server without a screen (Xvfb) on a display it chose itself (-displayfd): for PhoneTests'
/// windows (one for the whole test process) and the bench's. It dies with its ChildProcess.
public struct VirtualDisplay: Sendable {
    public let server: ChildProcess
    public let number: Int

    /// `DISPLAY` for a client of this server.
    public var name: String { ":\(number)" }

    public static func start() async throws -> VirtualDisplay {
        let server = try ChildProcess("/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        // The number comes once it accepts clients.
        guard await server.waitForOutput(containing: "\n"), let number = Int(server.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestSupportError("Xvfb did not start: \(server.output)")
        }
        return VirtualDisplay(server: server, number: number)
    }
}
