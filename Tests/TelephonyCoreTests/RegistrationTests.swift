import Foundation
import Testing
@testable import TelephonyCore

@Suite struct RegistrationTests {
    @Test func registersWithDefaultsAndIncreasingIDs() throws {
        let f = Fixture()
        let a = try f.register("Alpha")
        let b = try f.register("Beta", owner: ":1.2")
        #expect(a.id == 1)
        #expect(b.id == 2)
        #expect(a.configuration.maximumCallGroups == 2)
        #expect(a.configuration.maximumCallsPerCallGroup == 5)
        #expect(a.configuration.supportsVideo == false)
        #expect(a.configuration.supportedHandleTypes == [.generic, .phoneNumber, .emailAddress])
        #expect(a.configuration.includesCallsInRecents)
        #expect(f.log.trace == ["registered:1", "registered:2"])
        #expect(f.board.providers(ownedBy: ":1.2").map(\.id) == [2])
        #expect(f.board.orderedProviders.map(\.name) == ["Alpha", "Beta"])
    }

    @Test(arguments: [
        ("", "Name"), (String(repeating: "x", count: 65), "Name"), ("   ", "Name"),
    ])
    func rejectsBadNames(name: String, key: String) throws {
        let f = Fixture()
        let error = expectErrorNamed("InvalidArgs") { try f.register(name) }
        #expect(error?.message.hasPrefix(key) == true)
        #expect(f.board.providers.isEmpty)
        #expect(f.log.events.isEmpty)
    }

    @Test func acceptsNamesOfOneAndSixtyFourCharacters() throws {
        let f = Fixture()
        try f.register("x")
        try f.register(String(repeating: "é", count: 64))
        #expect(f.board.providers.count == 2)
    }

    @Test func rejectsBadConfigurationNamingTheKey() throws {
        let f = Fixture()
        let cases: [(String, (inout ProviderConfiguration) -> Void)] = [
            ("MaximumCallGroups", { $0.maximumCallGroups = 0 }),
            ("MaximumCallsPerCallGroup", { $0.maximumCallsPerCallGroup = 0 }),
            ("SupportedHandleTypes", { $0.supportedHandleTypes = [] }),
            ("IconData", { $0.iconData = png(width: 1, height: 1, bytes: 256 * 1024 + 1) }),
            ("IconData", { $0.iconData = [UInt8](repeating: 0, count: 64) }),
            ("IconData", { $0.iconData = png(width: 20_000, height: 20_000, bytes: 50_000) }),
            ("IconData", { $0.iconData = png(width: 513, height: 1, bytes: 100) }),
            ("IconData", { $0.iconData = png(width: 0, height: 0, bytes: 100) }),
            ("Name", { $0.name = "a" + String(repeating: "\u{301}", count: 1_000_000) }),
            ("Name", { $0.name = String(repeating: "👩‍👩‍👧‍👦", count: 11) }),
            ("URLSchemes", { $0.urlSchemes = ["1bad"] }),
            ("RingtoneSound", { $0.ringtoneSound = String(repeating: "a", count: 5000) }),
        ]
        for (key, configure) in cases {
            let error = expectErrorNamed("InvalidArgs") { try f.register("App", configure) }
            #expect(error?.message.contains(key) == true, "\(key): \(error?.message ?? "-")")
        }
        try f.register("App") { $0.iconData = png(width: 512, height: 512, bytes: 256 * 1024); $0.urlSchemes = ["monkeycall", "x-app+v1.2"] }
        #expect(f.board.providers.count == 1)
    }

    /// A PNG's signature and IHDR chunk claiming `width`×`height`, padded to `bytes`.
    func png(width: UInt32, height: UInt32, bytes: Int) -> [UInt8] {
        let be = { (value: UInt32) in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52] + be(width) + be(height)
            + [8, 6, 0, 0, 0, 0, 0, 0, 0]
        return header + [UInt8](repeating: 0, count: max(0, bytes - header.count))
    }

    @Test("a sandboxed app names its sound and icon by XDG name only; a host app may give paths")
    func sandboxedAppsNameSoundsAndIcons() throws {
        let f = Fixture()
        for (key, value) in [("RingtoneSound", "/dev/zero"), ("IconName", "/tmp/fifo"), ("IconName", "file:///etc/passwd"),
                             ("RingtoneSound", "../../x"), ("IconName", ".hidden"), ("IconName", "icône")] {
            let error = expectErrorNamed("InvalidArgs") {
                _ = try f.board.registerProvider(owner: ":1.5", appID: "org.example.App", configuration: {
                    var config = ProviderConfiguration(name: "App")
                    if key == "IconName" { config.iconName = value } else { config.ringtoneSound = value }
                    return config
                }())
            }
            #expect(error?.message.contains(key) == true, "\(key) \(value): \(error?.message ?? "-")")
        }
        var named = ProviderConfiguration(name: "App")
        named.iconName = "org.example.App"
        named.ringtoneSound = "phone-incoming-call"
        _ = try f.board.registerProvider(owner: ":1.5", appID: "org.example.App", configuration: named)
        try f.register("Host") { $0.iconName = "/usr/share/icons/hicolor/48x48/apps/host.png"; $0.ringtoneSound = "/usr/share/sounds/ring.oga" }
        #expect(f.board.providers.count == 2)
    }

    @Test func limitsProvidersPerOwnerAndInTotal() throws {
        let f = Fixture(options: .init(limits: .with { $0.maximumProvidersPerOwner = 2; $0.maximumProviders = 3 }))
        try f.register("A", owner: ":1.1")
        try f.register("B", owner: ":1.1")
        let perOwner = expectErrorNamed("LimitsExceeded") { try f.register("C", owner: ":1.1") }
        #expect(perOwner?.message.contains(":1.1") == true)
        #expect(perOwner?.message.contains("2") == true)
        try f.register("C", owner: ":1.2")
        let total = expectErrorNamed("LimitsExceeded") { try f.register("D", owner: ":1.3") }
        #expect(total?.message.contains("3") == true)
        // Removing one makes room again; the id is not reused.
        f.board.invalidateProvider(1)
        let d = try f.register("D", owner: ":1.3")
        #expect(d.id == 4)
    }

    @Test func defaultLimits() {
        let limits = SwitchboardLimits()
        #expect(limits.maximumProvidersPerOwner == 32)
        #expect(limits.maximumProviders == 10_000)
        #expect(limits.maximumCallsPerProvider == 1_000)
        #expect(limits.maximumRingingCallsPerApp == 100)
        let options = SwitchboardOptions()
        #expect(options.actionTimeout == 10)
        #expect(options.ringTimeout == 45)
    }
}

@Suite struct ErrorTests {
    @Test func namesMatchTheAPI() {
        let uuid = UUID.n(1)
        let expected: [(TelephonyError, String)] = [
            (.emptyTransaction, "EmptyTransaction"), (.unknownCallUUID(uuid), "UnknownCallUUID"),
            (.callUUIDAlreadyExists(uuid), "CallUUIDAlreadyExists"), (.invalidAction("x"), "InvalidAction"),
            (.maximumCallGroupsReached("x"), "MaximumCallGroupsReached"), (.unknownCallProvider("x"), "UnknownCallProvider"),
            (.unentitled("x"), "Unentitled"), (.filteredByDoNotDisturb, "FilteredByDoNotDisturb"),
            (.filteredByBlockList, "FilteredByBlockList"), (.unknownAction(uuid), "UnknownAction"),
            (.actionFailed("x"), "ActionFailed"), (.actionTimedOut("x"), "ActionTimedOut"),
            (.invalidArguments("x"), "InvalidArgs"), (.limitsExceeded("x"), "LimitsExceeded"),
        ]
        for (error, name) in expected {
            #expect(error.name == name)
            #expect(!error.message.isEmpty)
        }
        #expect(TelephonyError.unknownCallUUID(uuid).message.contains("00000001-0000-4000-8000-000000000000"))
        #expect(TelephonyError.invalidAction("Cannot hold.").message == "Cannot hold.")
    }

    @Test func uuidsCompareEqualWhateverTheLetterCase() throws {
        let lower = try #require(UUID(uuidString: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"))
        let upper = try #require(UUID(uuidString: "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"))
        #expect(lower == upper)
        #expect(upper.apiString == "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d")
    }
}
