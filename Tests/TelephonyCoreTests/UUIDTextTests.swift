import Foundation
import Testing
@testable import TelephonyCore

/// The API's UUIDs are written and read by hand (Foundation's go through `snprintf` and `sscanf`):
/// they must say and accept what Foundation does.
@Suite("UUIDs in the API's form")
struct UUIDTextTests {
    @Test("written lower case and read back in either case, as Foundation does")
    func roundTrip() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(uuid.apiString == uuid.uuidString.lowercased())
            #expect(UUID(apiString: uuid.apiString) == uuid)
            #expect(UUID(apiString: uuid.uuidString) == uuid)
        }
        #expect(UUID(apiString: "00000000-0000-0000-0000-000000000000") == UUID(uuidString: "00000000-0000-0000-0000-000000000000"))
        #expect(UUID(apiString: "FFFFFFFF-ffff-FfFf-fFfF-ffffffffffff") == UUID(uuidString: "ffffffff-ffff-ffff-ffff-ffffffffffff"))
    }

    @Test("what Foundation refuses is refused", arguments: [
        "", "not a uuid", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000",
        "123e4567e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a456_426614174000", "g23e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3-a456-42661417400\u{e9}", "{23e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-4266141740\0\0",
    ])
    func refusals(_ text: String) {
        #expect(UUID(uuidString: text) == nil)
        #expect(UUID(apiString: text) == nil)
    }
}
