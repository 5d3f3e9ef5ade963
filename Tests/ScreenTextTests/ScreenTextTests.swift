import Testing
import ScreenText

@Suite struct ScreenTextTests {
    @Test func controlsBecomeSpacesAndTheRestStays() {
        #expect(ScreenText.clean("Alice\nBob") == "Alice Bob")
        #expect(ScreenText.clean("\u{1B}[31mRed\u{1B}[0m") == " [31mRed [0m")
        #expect(ScreenText.clean("tab\there\r\u{85}\u{2028}") == "tab here   ")
        #expect(ScreenText.clean("\u{0}\u{7F}\u{9B}") == "   ")
    }

    @Test func bidiOverridesAndIsolatesAreDropped() {
        #expect(ScreenText.clean("evil\u{202E}gnp.exe") == "evilgnp.exe")
        #expect(ScreenText.clean("\u{2066}a\u{2067}b\u{2068}c\u{2069}\u{202A}\u{202B}\u{202C}\u{202D}") == "abc")
    }

    @Test func ourOwnLineBreaksCanBeKept() {
        #expect(ScreenText.cleanKeepingLineBreaks("Alice\n+1 555\u{1B}\u{202E}") == "Alice\n+1 555 ")
    }

    @Test func namesInAnyScriptAreKeptAsWritten() {
        for name in ["Zoë Ångström", "محمد\u{200F}", "李小龍", "👩‍👩‍👧 Family", "Ана-Мария", "e\u{301}"] {
            #expect(ScreenText.clean(name) == name)
        }
    }

    @Test func aControlFusedWithACombiningMarkIsStillCleaned() {
        // "\n\u{301}" is one grapheme cluster; cleaning per Character would keep it.
        #expect(ScreenText.clean("a\n\u{301}b") == "a \u{301}b")
    }

    @Test func markupIsEscapedPerScalar() {
        // U+0D4E is a prepended-concatenation mark: "\u{0D4E}<" is one Character, so per-Character
        // escaping let the "<" through as live markup.
        let hostile = "\u{0D4E}<b>\u{301}x"
        let escaped = ScreenText.markupEscaped(hostile)
        #expect(!escaped.unicodeScalars.contains("<"))
        #expect(!escaped.unicodeScalars.contains(">"))
        #expect(escaped == "\u{0D4E}&lt;b&gt;\u{301}x")
        #expect(ScreenText.markupEscaped("Tom & \"Jerry\" 'x'") == "Tom &amp; &quot;Jerry&quot; &apos;x&apos;")
    }

    @Test func handlesHoldNoControlsBidiControlsOrMarks() {
        for hazard in ["\u{0}", "\u{1B}", "\t", "\n", "\u{7F}", "\u{85}", "\u{9F}", "\u{2028}", "\u{2029}", "\u{202A}", "\u{202E}",
                       "\u{2066}", "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}"] {
            #expect(ScreenText.handleHazard(in: "+1555" + hazard + "0100") == hazard.unicodeScalars.first, "\(hazard.debugDescription)")
        }
        for fine in ["+1 555 0100", "alice@example.com", "sip:bob@example.com", "زينب", "Zoë", "+1-555-0100#12"] {
            #expect(ScreenText.handleHazard(in: fine) == nil, "\(fine)")
        }
        #expect(ScreenText.cleanHandle("\u{1B}[31m+1900555\t0100\u{202E}") == "[31m+1900555 0100")
        #expect(ScreenText.cleanHandle("+1555\u{200F}0199\u{2066}") == "+15550199")
        #expect(ScreenText.handleRefusal("a\u{1B}", named: "Handle")?.hasPrefix("Handle contains U+001B, a control character") == true)
        #expect(ScreenText.handleRefusal("a\u{202E}", named: "Handle")?.contains("U+202E, a bidirectional formatting character") == true)
        #expect(ScreenText.handleRefusal("alice", named: "Handle") == nil)
    }
}
