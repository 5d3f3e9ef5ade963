import Foundation
import Testing
@testable import AddressBook

@Suite struct AddressBookVCardTests {
    @Test("vCard 3.0 and 4.0: folded lines, groups, escapes, tel: URIs, N when there is no FN")
    func versions() {
        let text = """
        BEGIN:VCARD\r
        VERSION:3.0\r
        UID:abc\r
        FN:Ada\r
          Lovelace\\, Countess\r
        item1.TEL;TYPE=CELL:+44 20 7946\r
         0000\r
        PHOTO;ENCODING=b;TYPE=JPEG:AAAA\r
        END:VCARD\r
        BEGIN:VCARD
        VERSION:4.0
        N:Hopper;Grace;Brewster;Rear Admiral;
        TEL;VALUE=uri;TYPE="voice,cell":tel:+1-408-555-5555;ext=22
        TEL;VALUE=uri:tel:+1-408-555-0000
        END:VCARD
        BEGIN:VCARD
        VERSION:4.0
        ORG:Met Office;Forecasts
        TEL:0370 900 0100
        END:VCARD
        """
        let (cards, errors) = VCardParser.parse(Data(text.utf8), file: "a.vcf")
        #expect(errors.isEmpty)
        #expect(cards == [
            VCard(uid: "abc", name: "Ada Lovelace, Countess", telephones: ["+44 20 79460000"], telephoneLabels: ["mobile"]),
            VCard(uid: nil, name: "Rear Admiral Grace Brewster Hopper", telephones: ["+1-408-555-5555;ext=22", "+1-408-555-0000"],
                  telephoneLabels: ["mobile", ""]),
            VCard(uid: nil, name: "Met Office", telephones: ["0370 900 0100"], telephoneLabels: [""]),
        ])
    }

    @Test("vCard 2.1 quoted-printable, with a soft line break and a stray '='; Latin-1 bytes")
    func quotedPrintable() {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Bj=C3=B6rk Gu=C3=B0mundsd=\n=C3=B3ttir =ZZ\nTEL;CELL:+354 555 1234\nEND:VCARD\n"
        let (cards, errors) = VCardParser.parse(Data(text.utf8), file: "q.vcf")
        #expect(errors.isEmpty)
        #expect(cards.first?.name == "Björk Guðmundsdóttir =ZZ")
        #expect(cards.first?.telephoneLabels == ["mobile"], "vCard 2.1's bare CELL")
        let latin1 = Data("BEGIN:VCARD\nFN:Ren".utf8) + Data([0xE9]) + Data("\nTEL:+33 1 23 45 67 89\nEND:VCARD\n".utf8)
        #expect(VCardParser.parse(latin1, file: "l.vcf").cards.first?.name == "René")
    }

    @Test("a damaged card is an error naming its file and line; the file's other cards are read; nothing crashes")
    func damaged() {
        let text = """
        BEGIN:VCARD
        FN:Broken
        this line has no colon
        END:VCARD
        BEGIN:VCARD
        FN:Fine
        TEL:+44 20 7946 0001
        END:VCARD
        FN:Outside
        BEGIN:VCARD
        FN:Never ends
        """
        let (cards, errors) = VCardParser.parse(Data(text.utf8), file: "/x/damaged.vcf")
        #expect(cards.map(\.name) == ["Fine"])
        #expect(errors.map(\.description) == [
            "/x/damaged.vcf:3: a line without ':' inside a card",
            "/x/damaged.vcf:4: END:VCARD without BEGIN:VCARD",
            "/x/damaged.vcf:9: 'FN' outside BEGIN:VCARD … END:VCARD",
            "/x/damaged.vcf:10: BEGIN:VCARD without END:VCARD",
        ])
        // Random bytes: errors or nothing, never a trap.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0..<400, using: &generator)).map { _ in
                [UInt8(ascii: "\n"), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: " "), 0xC3, 0xFF,
                 UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator)!
            }
            _ = VCardParser.parse(Data("BEGIN:VCARD\n".utf8) + Data(bytes), file: "r.vcf")
        }
    }
}

@Suite struct AddressBookNumberingTests {
    @Test("national numbers take the locale's country; + and 00 are international; other digits as the project reads them")
    func national() {
        let gb = ContactNumbering(region: "GB")
        #expect(gb.e164("020 7946 0000") == 442079460000)
        #expect(gb.e164("+44 (0)20 7946 0000") == nil || gb.e164("+44 20 7946 0000") == 442079460000)
        #expect(gb.e164("0044 20 7946 0000") == 442079460000)
        #expect(gb.e164("tel:+1-408-555-5555;ext=22") == 14085555555)
        #expect(gb.e164("14085555555") == 14085555555)
        #expect(gb.e164("alice@example.org") == nil)
        let us = ContactNumbering(region: "US")
        #expect(us.e164("(408) 555-5555") == 14085555555)
        #expect(us.e164("1 408 555 5555") == 14085555555)
        let it = ContactNumbering(region: "IT")
        #expect(it.e164("06 1234 5678") == 390612345678)
        #expect(it.e164("39 06 1234 5678") == 390612345678)
        #expect(ContactNumbering(region: nil).e164("020 7946 0000") == nil)
        #expect(ContactNumbering.fromEnvironment(["LANG": "en_GB.UTF-8"]).region == "GB")
        #expect(ContactNumbering.fromEnvironment(["LC_ALL": "de_AT.UTF-8@euro", "LANG": "en_GB.UTF-8"]).region == "AT")
        #expect(ContactNumbering.fromEnvironment(["LANG": "C.UTF-8"]).region == nil)
    }
}

@Suite struct AddressBookIndexTests {
    @Test("set, edit, remove and drop a source; a number two contacts share is named by the first key, whatever the order")
    func changes() {
        let index = ContactIndex()
        let a = ContactKey(source: "eds:book", uid: "a"), b = ContactKey(source: "vcf:/b.vcf", uid: "0")
        index.apply([.set(b, name: "Bee", numbers: [2, 3]), .set(a, name: "Ay", numbers: [1, 2])])
        #expect(index.lookup(1) == "Ay" && index.lookup(2) == "Ay" && index.lookup(3) == "Bee")
        let before = index.snapshot
        index.apply([.set(a, name: "Ay Two", numbers: [4])]) // Edited: its old numbers go.
        #expect(index.lookup(1) == nil && index.lookup(2) == "Bee" && index.lookup(4) == "Ay Two")
        #expect(before.name(for: 1) == "Ay") // A snapshot never changes.
        index.apply([.remove(a)])
        #expect(index.lookup(4) == nil && index.snapshot.contactCount == 1)
        #expect(index.apply([.remove(a)]) == nil) // Nothing changed: nothing published.
        index.apply([.set(a, name: "", numbers: [9]), .removeSource("vcf:/b.vcf")])
        #expect(index.snapshot.numberCount == 0 && index.sources.isEmpty)
    }

    @Test("random batches answer as a plain table of contacts does: shared numbers, edits, removals, sources gone and back")
    func againstModel() {
        var random = SplitMix(seed: 30)
        let index = ContactIndex()
        var model: [ContactKey: (name: String, numbers: Set<Int64>)] = [:]
        let sources = ["eds:a", "eds:b", "vcf:/c.vcf", "vcf:/d/e.vcf"]
        for round in 0..<400 {
            var batch: [ContactChange] = []
            for _ in 0..<Int(random.next() % 6) + 1 {
                let key = ContactKey(source: sources[Int(random.next() % 4)], uid: "\(random.next() % 5)")
                switch random.next() % 10 {
                case 0: batch.append(.removeSource(key.source))
                case 1, 2: batch.append(.remove(key))
                default:
                    // Few numbers, so that contacts share them; now and then a long name, or none.
                    let numbers = (0..<Int(random.next() % 4)).map { _ in Int64(random.next() % 12) }
                    let name = random.next() % 8 == 0 ? "" : "Name \(round) of a contact with a longer name \(key.uid)"
                    batch.append(.set(key, name: random.next() % 2 == 0 ? String(name.prefix(9)) : name, numbers: numbers))
                }
            }
            index.apply(batch)
            for change in batch {
                switch change {
                case .set(let key, let name, let phones):
                    model[key] = name.isEmpty || phones.isEmpty ? nil : (name, Set(phones.map(\.e164)))
                case .remove(let key): model[key] = nil
                case .removeSource(let source): model = model.filter { $0.key.source != source }
                }
            }
            let snapshot = index.snapshot
            for number in Int64(0)..<12 {
                let expected = model.filter { $0.value.numbers.contains(number) }.min { $0.key < $1.key }?.value.name
                #expect(snapshot.name(for: number) == expected, "round \(round), number \(number)")
            }
            #expect(snapshot.contactCount == model.count)
            #expect(snapshot.numberCount == Set(model.values.flatMap(\.numbers)).count)
            #expect(index.sources == Set(model.keys.map(\.source)))
        }
    }
}

/// A small deterministic generator, so that a failing round is the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
