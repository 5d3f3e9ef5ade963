/// Handles (the number or address a call goes to) as they enter the service: from a client that
/// dials, a link, a search result, an app's report.
///
/// A handle is dialled, shown, matched against the block list and kept in Recents, so it may hold
/// none of what makes text read as something else: controls (an ESC recolours a terminal, a tab
/// or a newline splits it), bidi overrides and isolates, and — unlike a caller's name, where
/// right-to-left scripts need them — the direction marks too (LRM, RLM, ALM): invisible in a
/// number, they make `+1 555 0100` and a number that only looks like it two handles.
extension ScreenText {
    /// The first scalar a handle may not hold (see above); nil when it has none.
    public static func handleHazard(in handle: some StringProtocol) -> Unicode.Scalar? {
        handle.unicodeScalars.first(where: isHandleHazard)
    }

    /// A handle with what it may not hold taken out: controls become a space, bidi controls and
    /// marks are dropped, and the ends are trimmed. For a handle that reports a call that exists
    /// (an app's caller ID), which is kept rather than refused.
    public static func cleanHandle(_ handle: String) -> String {
        guard handleHazard(in: handle) != nil else { return handle }
        var scalars = String.UnicodeScalarView()
        for scalar in handle.unicodeScalars {
            if !isHandleHazard(scalar) {
                scalars.append(scalar)
            } else if isControl(scalar) {
                scalars.append(" ")
            }
        }
        return String(scalars).trimmingWhitespace()
    }

    /// Why `handle` cannot be called, in a sentence naming it `what` ("Handle", "the link's
    /// handle"); nil when it can. "Handle contains U+001B, a control character; …".
    public static func handleRefusal(_ handle: some StringProtocol, named what: String) -> String? {
        guard let hazard = handleHazard(in: handle) else { return nil }
        let code = codePoint(hazard)
        let kind = isControl(hazard) ? "a control character" : "a bidirectional formatting character"
        return "\(what) contains \(code), \(kind); a handle to call may hold no control or bidirectional formatting characters"
    }

    /// "U+001B".
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func isHandleHazard(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isBidiControl(scalar) || isDirectionMark(scalar)
    }

    /// LRM, RLM and ALM.
    private static func isDirectionMark(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x200E || scalar.value == 0x200F || scalar.value == 0x061C
    }
}
