import DBus
import MonkeyCallAPI
import MonkeyCallClient
import PhoneModel
import Synchronization

/// A service in memory for the models: Recents and contacts of any size, every request counted,
/// and a missed count whose answer the test can hold back.
final class FakeBackend: PhoneBackend {
    struct State {
        var recents: [Telephony1.RecentEntry] = []
        var contacts: [Contact] = []
        var missedCount: UInt32 = 0
        /// (limit, offset) of each `recents` request; the limit of each contact search.
        var recentsRequests: [(limit: UInt32, offset: UInt32)] = []
        var contactLimits: [UInt32] = []
        /// When set, `missedCount()` answers only once the test resumes it.
        var holdMissedCount = false
        var heldMissedCount: CheckedContinuation<Void, Never>?
        /// MonkeyCall's GNOME Shell extension as the fake shell says it is; how often it was asked,
        /// and turned on; what turning it on throws (nil: it turns on).
        var lockScreenExtension: ExtensionOffer = .unavailable
        var lockScreenExtensionAsked = 0
        var lockScreenExtensionEnabled = 0
        var enableError: (any Error)?
    }
    let state = Mutex(State())

    /// `recents` entries, newest (highest id) first, as the service lists them; `contacts` named "Contact N".
    init(recents: Int = 0, contacts: Int = 0) {
        state.withLock { state in
            state.recents = (0..<recents).reversed().map { index in
                var entry = Telephony1.RecentEntry()
                entry.id = UInt64(index + 1)
                entry.handle = "+1408555\(1000 + index % 9000)"
                entry.status = index % 10 == 0 ? "missed" : "answered"
                return entry
            }
            state.contacts = (0..<contacts).map { Contact(id: "c\($0)", name: "Contact \($0)", numbers: [("mobile", "+4477009\($0)")], isFavorite: false) }
        }
    }

    func isRunning() async throws -> Bool { true }
    func start() async throws {}
    func follow(_ handler: @escaping @Sendable (TelephonyEvent) -> Void) async throws {}
    func resubscribe() async throws {}

    func recents(limit: UInt32, offset: UInt32) async throws -> [Telephony1.RecentEntry] {
        state.withLock { state in
            state.recentsRequests.append((limit, offset))
            return Array(state.recents.dropFirst(Int(offset)).prefix(Int(limit)))
        }
    }

    func missedCount() async throws -> UInt32 {
        if state.withLock({ $0.holdMissedCount }) {
            await withCheckedContinuation { continuation in state.withLock { $0.heldMissedCount = continuation } }
        }
        return state.withLock { $0.missedCount }
    }

    /// Lets a held `missedCount()` answer (with what the state says then); false when none waits yet.
    func releaseMissedCount() -> Bool {
        guard let continuation = state.withLock({ state in
            defer { state.heldMissedCount = nil }
            return state.heldMissedCount
        }) else { return false }
        continuation.resume()
        return true
    }

    func markAllSeen() async throws {}
    func deleteRecent(_ id: UInt64) async throws {}
    func clearRecents() async throws {}
    func callBack(_ id: UInt64) async throws -> String { "" }
    func favorites() async throws -> [Telephony1.Favorite] { [] }
    func addFavorite(handle: String, handleType: String, name: String, app: String) async throws -> UInt64 { 1 }
    func removeFavorite(_ id: UInt64) async throws {}
    func callFavorite(_ id: UInt64) async throws -> String { "" }

    func searchContacts(_ query: String, limit: UInt32) async throws -> [Contact] {
        state.withLock { state in
            state.contactLimits.append(limit)
            return Array(state.contacts.filter { query.isEmpty || $0.name.contains(query) }.prefix(Int(limit)))
        }
    }

    func providers() async throws -> [ProviderSnapshot] { [] }
    func linkHandlers() async throws -> [String: String] { [:] }
    func setLinkHandler(scheme: String, app: String) async throws {}
    func startCall(handle: String, handleType: String, provider: ObjectPath?) async throws -> String { "" }
    func calls() async throws -> [CallSnapshot] { [] }
    func answer(_ uuid: String) async throws {}
    func end(_ uuid: String) async throws {}
    func setHeld(_ uuid: String, _ onHold: Bool) async throws {}
    func setGroup(_ uuid: String, with other: String) async throws {}
    func setMuted(_ uuid: String, _ muted: Bool) async throws {}
    func playDTMF(_ uuid: String, _ digits: String) async throws {}
    func silence(_ uuid: String) async throws {}

    func lockScreenExtension() async -> ExtensionOffer {
        state.withLock { state in
            state.lockScreenExtensionAsked += 1
            return state.lockScreenExtension
        }
    }

    func enableLockScreenExtension() async throws {
        try state.withLock { state in
            state.lockScreenExtensionEnabled += 1
            if let error = state.enableError { throw error }
            state.lockScreenExtension = .on
        }
    }
}
