import Foundation
import Testing
@testable import CallDirectory

@Suite struct CallDirectoryPhoneNumberTests {
    @Test(arguments: [
        ("+1 (408) 555-5555", Int64(14085555555)),
        ("tel:+14085555555", 14085555555),
        ("TEL:+1-408-555-5555;ext=22", 14085555555),
        ("14085555555", 14085555555),
        ("+44 20 7946.0000", 442079460000),
        (" +33 1/23 45 67 89 ", 33123456789),
        ("9223372036854775806", Int64.max - 1),
    ])
    func normalises(handle: String, number: Int64) {
        #expect(PhoneNumber.normalize(handle) == number)
    }

    @Test(arguments: ["", "tel:", "+", "()-", "alice@example.org", "1-800-FLOWERS", "+1 408 555 5555 x12",
                      "1+2", "++1", "0", "000", "9223372036854775807", "99999999999999999999", "١٢٣"])
    func rejects(handle: String) {
        #expect(PhoneNumber.normalize(handle) == nil)
    }

    @Test func blockListHandlesAndPrefixes() throws {
        var list = try BlockList(patterns: ["+44*", "alice@example.org", "+1 (408) 555-5555"])
        #expect(list.matches(handle: "+44 20 7946 0000"))
        #expect(list.matches(handle: "tel:+442079460000"))
        #expect(list.matches(handle: "442079460000"))
        #expect(!list.matches(handle: "+14 4000"))
        #expect(!list.matches(handle: "+3344"))
        #expect(list.matches(handle: "ALICE@example.org"))
        #expect(!list.matches(handle: "bob@example.org"))
        #expect(list.matches(handle: "14085555555"))
        #expect(list.matches(handle: "tel:+1-408-555-5555"))
        #expect(!list.matches(handle: "14085555556"))
        #expect(list.patterns == ["+44*", "alice@example.org", "+1 (408) 555-5555"])
        let addedAgain = try list.add("14085555555")
        #expect(!addedAgain) // The same number.
        let removed = list.remove("tel:+14085555555")
        #expect(removed)
        #expect(!list.matches(handle: "14085555555"))
        let removedNobody = list.remove("nobody")
        #expect(!removedNobody)
        try list.add("+1 (408)*")
        #expect(list.matches(handle: "+1 408 000 0000"))
        #expect(!list.matches(handle: "+1 409 000 0000"))
    }

    // "+1*5", "*44": a * before the end of a number is no wildcard, and would never match as a handle.
    @Test(arguments: ["", "   ", "*", "+*", "alice*", "+44 x*", "+1*5", "*44", "+44**"])
    func invalidPatterns(pattern: String) {
        var list = BlockList()
        #expect(errorName { try list.add(pattern) } == "InvalidArgs")
        #expect(list.patterns.isEmpty)
    }

    @Test("a pattern longer than a handle, or one more than the list holds, is refused (found by the fuzz tests)")
    func blockListBounds() throws {
        var list = BlockList()
        try list.add(String(repeating: "x", count: DirectoryLimits.maximumPatternBytes))
        #expect(errorName { try list.add(String(repeating: "y", count: DirectoryLimits.maximumPatternBytes + 1)) } == "InvalidArgs")
        #expect(errorName { try list.add(String(repeating: "7", count: 1 << 20) + "*") } == "InvalidArgs")
        for number in 1..<DirectoryLimits.maximumBlockListPatterns { try list.add("caller\(number)") }
        #expect(errorName { try list.add("one too many") } == "InvalidArgs")
        #expect(try list.add("caller1") == false)
        #expect(list.patterns.count == DirectoryLimits.maximumBlockListPatterns)
    }

    @Test func blockListIsCodable() throws {
        let list = try BlockList(patterns: ["+44*", "bob"])
        let data = try JSONEncoder().encode(list)
        #expect(String(decoding: data, as: UTF8.self) == #"["+44*","bob"]"#)
        #expect(try JSONDecoder().decode(BlockList.self, from: data) == list)
    }
}
