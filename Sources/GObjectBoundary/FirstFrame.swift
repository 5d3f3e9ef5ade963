import CGtk
import FoundationEssentials
import ScreenText

/// For the bench and the tests: with `MONKEYCALL_PHONE_REPORT_FRAME` set, one line on stdout,
/// "first frame MS" (CLOCK_MONOTONIC, milliseconds), when a window first draws: the Phone app's
/// and the bench's minimal window report the same moment the same way.
@MainActor
public enum FirstFrame {
    private static var isWanted: Bool { ProcessInfo.processInfo.environment["MONKEYCALL_PHONE_REPORT_FRAME"] != nil }

    /// Reports `window`'s first frame, once, when wanted.
    public static func report(_ window: GPointer?) {
        guard isWanted else { return }
        var reported = false
        connect(window, "map") {
            guard let clock = gtk_widget_get_frame_clock(cast(window)) else { return }
            connect(raw(clock), "after-paint") {
                guard !reported else { return }
                reported = true
                var time = timespec()
                clock_gettime(CLOCK_MONOTONIC, &time)
                StandardStream.output.write("first frame \(Int(time.tv_sec) * 1000 + Int(time.tv_nsec) / 1_000_000)\n")
            }
        }
    }
}
