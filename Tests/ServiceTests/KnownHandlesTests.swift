@testable import TelephonyService
import Testing

@Suite("Who has called lately: bounded, newest kept")
struct KnownHandlesTests {
    @Test("the most recent distinct handles are kept; a handle seen again is new again")
    func newestKept() {
        var known = KnownHandles(capacity: 3, newestFirst: ["c", "b", "c", "a"])
        #expect(["a", "b", "c"].allSatisfy(known.contains) && known.count == 3)
        known.touch("a") // a is now the newest; b the oldest
        known.touch("d")
        #expect(!known.contains("b") && ["a", "c", "d"].allSatisfy(known.contains))
        known.touch("e")
        #expect(!known.contains("c") && known.count == 3)
    }

    @Test("a million touches of distinct handles, or of a few, stay within the bound")
    func bounded() {
        var known = KnownHandles(capacity: 100)
        for index in 0..<100_000 { known.touch("caller-\(index)") }
        #expect(known.count == 100 && known.contains("caller-99999") && !known.contains("caller-99899"))
        var few = KnownHandles(capacity: 100)
        for index in 0..<100_000 { few.touch("friend-\(index % 5)") }
        #expect(few.count == 5 && few.contains("friend-0"))
    }
}
