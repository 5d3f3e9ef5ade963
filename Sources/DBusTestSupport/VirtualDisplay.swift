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
        // The number comes on stdout once it accepts clients. Only stdout: Xvfb complains on stderr
        // about each display it finds taken on its way (a socket left in /tmp/.X11-unix by a killed
        // server, or one in use in another mount namespace, such as a Debian 13 stage's) and goes
        // on to the next; a line there is no answer yet ("Xvfb did not start" when it was).
        guard await server.waitForOutput(where: { output in
                  // stdout comes first in `output`: the number and its line end.
                  let number = output.prefix(while: \.isNumber)
                  return !number.isEmpty && output.dropFirst(number.count).first == "\n"
              }),
              let number = Int(server.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestSupportError("Xvfb did not start: \(server.output)")
        }
        return VirtualDisplay(server: server, number: number)
    }
}
