import Foundation
import Testing
@testable import CallDirectory
@testable import PhoneNumber

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
                      "1+2", "++1", "0", "000", "9223372036854775807", "99999999999999999999",
                      "1\n2", "+1 408 555 5555;ext=", "+1 408 555 5555;ext=x1", "+1 408 555 5555;ext=1;ext=2", "٣a"])
    func rejects(handle: String) {
        #expect(PhoneNumber.normalize(handle) == nil)
    }

    @Test("digits of any script, and spaces, dashes and invisible marks of any kind, are read as a number (found on main: a block dodged by formatting)",
          arguments: ["＋１ （４０８） ５５５－５５５５", "+1\u{2010}408\u{2011}555\u{2013}5555", "+1\u{2014}408\u{2212}555\u{2012}5555",
                      "+1\u{00A0}408\u{2009}555\u{202F}5555", "+1\u{3000}408\u{200B}555\u{200E}5555", "\u{202A}+1 408 555 5555\u{202C}",
                      "١٤٠٨٥٥٥٥٥٥٥", "+۱۴۰۸۵۵۵۵۵۵۵", "१४०८५५५५५५५", "tel:＋１４０８５５５５５５５"])
    func unicodeDigitsAndSeparators(handle: String) throws {
        #expect(PhoneNumber.normalize(handle) == 14085555555)
        #expect(PhoneNumber.key(handle) == "14085555555")
        #expect(try BlockList(patterns: ["+1 408 555 5555"]).matches(handle: handle))
        #expect(try BlockList(patterns: ["+1 408*"]).matches(handle: handle))
    }

    @Test("a number or prefix written with leading zeros keeps them (found on main: 0044* never matched, 0800… matched a number of country 8)")
    func leadingZerosKept() throws {
        #expect(PhoneNumber.key("0800 123 456") == "0800123456")
        #expect(PhoneNumber.key("0044 20 7946 0000") == "00442079460000")
        // No country code: no directory number (a directory's 800123456 is another number).
        #expect(PhoneNumber.normalize("0800 123 456") == nil)
        #expect(PhoneNumber.normalize("07946 000000") == nil)
        let prefix = try BlockList(patterns: ["0044*"])
        #expect(prefix.matches(handle: "0044 20 7946 0000"))
        #expect(prefix.matches(handle: "tel:0044-20-7946-0000"))
        #expect(!prefix.matches(handle: "+44 20 7946 0000"))
        #expect(!prefix.matches(handle: "044 20 7946 0000"))
        let national = try BlockList(patterns: ["0800 123 456"])
        #expect(national.matches(handle: "0800123456"))
        #expect(national.matches(handle: "tel:0800-123-456"))
        #expect(!national.matches(handle: "800 123 456"))
        #expect(!national.matches(handle: "+800123456"))
        #expect(!national.matches(handle: "00800123456"))
        #expect(try BlockList(patterns: ["0*"]).matches(handle: "07946 000000"))
        #expect(try !BlockList(patterns: ["0*"]).matches(handle: "+44 7946 000000"))
        var list = try BlockList(patterns: ["0800 123 456"])
        #expect(try list.add("800 123 456")) // Another number.
    }

    @Test("an extension is part of the handle: blocking one extension leaves the number and its other extensions (found on main: it blocked the whole number)")
    func extensionsAreMatched() throws {
        #expect(PhoneNumber.key("tel:+1-408-555-5555;ext=22") == "14085555555;ext=22")
        #expect(PhoneNumber.key("+1 408 555 5555;phone-context=example.com;EXT=2-2") == "14085555555;ext=22")
        #expect(PhoneNumber.parse("+1 408 555 5555;ext=22")?.extension == "22")
        let oneExtension = try BlockList(patterns: ["tel:+1-408-555-5555;ext=22"])
        #expect(oneExtension.matches(handle: "+14085555555;ext=22"))
        #expect(!oneExtension.matches(handle: "+14085555555"))
        #expect(!oneExtension.matches(handle: "+14085555555;ext=23"))
        #expect(!oneExtension.matches(handle: "+14085555555;ext=2"))
        // The number without an extension covers its extensions, as a directory entry does.
        let wholeNumber = try BlockList(patterns: ["+1 408 555 5555"])
        #expect(wholeNumber.matches(handle: "+14085555555;ext=22"))
        var list = try BlockList(patterns: ["+14085555555;ext=22"])
        #expect(try list.add("+14085555555;ext=23"))
        #expect(try list.add("+14085555555"))
        #expect(!(try list.add("tel:14085555555;ext=22")))
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

    @Test("an ASCII handle is read byte by byte exactly as the general reading reads it: 200,000 handles made of the characters that matter (digits, +, separators, whitespace, tel:, ;ext=, letters, control characters)")
    func asciiReadingMatchesTheGeneralOne() {
        let pieces = ["1", "4", "0", "9", "+", " ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{1C}", "-", ".", "(", ")", "/", ";", "=", ";ext=", "ext",
                      "EXT", " ext = ", "tel:", "TeL:", "tel\u{1A}", "x", "e", ":", "\u{7F}", "\u{0}", ";;", "=1", "\r\n"]
        var generator = SystemRandomNumberGenerator()
        var differences: [String] = []
        for _ in 0..<200_000 {
            let handle = (0..<Int.random(in: 0...9, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let fast = Array(handle.utf8).withUnsafeBufferPointer { PhoneNumber.parseASCII($0) }
            if fast != PhoneNumber.parseUnicode(handle), differences.count < 10 { differences.append(handle.debugDescription) }
        }
        #expect(differences.isEmpty, "read differently: \(differences)")
    }
}
