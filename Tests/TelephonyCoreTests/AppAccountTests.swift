import Foundation
import Testing
@testable import TelephonyCore

/// Limits counted per app, with a share of the pending transactions kept for the user.
struct AppAccountTests {
    static func limits() -> SwitchboardLimits {
        var limits = SwitchboardLimits()
        limits.maximumPendingTransactions = 10
        limits.maximumPendingTransactionsPerApp = 4
        limits.userReservedPendingTransactions = 3
        limits.registrationsPerMinute = 3
        limits.outgoingCallBurst = 2
        limits.outgoingCallsPerSecond = 1
        limits.maximumProvidersPerApp = 2
        return limits
    }

    @Test func pendingTransactionsPerAppAndTheUsersShare() throws {
        let f = Fixture(options: .init(actionTimeout: 60, ringTimeout: 600, limits: Self.limits()))
        let a = try f.register("A", owner: ":1.1")
        let b = try f.register("B", owner: ":1.2")
        try f.incoming(a, .n(1))
        try f.incoming(b, .n(2))
        // App A (its connection owns a provider) fills its share; then B fills what is left for apps.
        for _ in 0..<4 { try f.request(.setMuted(.n(1), true), requester: ":1.1") }
        let mine = expectErrorNamed("LimitsExceeded") { try f.request(.setMuted(.n(1), true), requester: ":1.1") }
        #expect(mine?.message.contains(":1.1 has 4 transactions still pending; the limit for one app is 4") == true, "\(mine?.message ?? "")")
        for _ in 0..<3 { try f.request(.setMuted(.n(2), true), requester: ":1.2") }
        let flooding = expectErrorNamed("LimitsExceeded") { try f.request(.setMuted(.n(2), false), requester: ":1.2") }
        #expect(flooding?.message.contains("the limit for apps is 7") == true, "\(flooding?.message ?? "")")
        // The user (a tool that owns no provider, or a notification button) still answers.
        try f.request(.answer(.n(2)), requester: ":1.99")
        try f.request(.setMuted(.n(1), false), requester: nil)
        // Completed transactions give the app its share back.
        f.clock.advance(by: 60)
        try f.request(.setMuted(.n(1), true), requester: ":1.1")
    }

    @Test func registrationsAndProvidersPerApp() throws {
        let f = Fixture(options: .init(limits: Self.limits()))
        _ = try f.board.registerProvider(owner: ":1.1", appID: "org.example.App", configuration: .init(name: "One"))
        _ = try f.board.registerProvider(owner: ":1.2", appID: "org.example.App", configuration: .init(name: "Two"))
        let providers = expectErrorNamed("LimitsExceeded") {
            _ = try f.board.registerProvider(owner: ":1.3", appID: "org.example.App", configuration: .init(name: "Three"))
        }
        #expect(providers?.message.contains("org.example.App already has 2 providers") == true, "\(providers?.message ?? "")")
        // A host connection: three registrations a minute, whatever it invalidates in between.
        for _ in 0..<3 { f.board.invalidateProvider(try f.register("Host", owner: ":1.5").id) }
        let often = expectErrorNamed("LimitsExceeded") { try f.register("Host", owner: ":1.5") }
        #expect(often?.message.contains("registers providers too often") == true, "\(often?.message ?? "")")
        f.clock.advance(by: 20)
        try f.register("Host", owner: ":1.5")
    }

    @Test func outgoingStartsPerApp() throws {
        let f = Fixture(options: .init(limits: Self.limits()))
        let a = try f.register("A", owner: ":1.1") { $0.maximumCallGroups = 10 }
        try f.request(.start(.n(1), handle: Handle(value: "x"), provider: a.id), requester: ":1.1")
        try f.request(.start(.n(2), handle: Handle(value: "y"), provider: a.id), requester: ":1.1")
        let fast = expectErrorNamed("LimitsExceeded") { try f.request(.start(.n(3), handle: Handle(value: "z"), provider: a.id), requester: ":1.1") }
        #expect(fast?.message.contains("starts outgoing calls too fast") == true, "\(fast?.message ?? "")")
        // The user's own starts are not counted.
        try f.request(.start(.n(4), handle: Handle(value: "w"), provider: a.id), requester: ":1.99")
        f.clock.advance(by: 1)
        try f.request(.start(.n(5), handle: Handle(value: "v"), provider: a.id), requester: ":1.1")
    }
}
