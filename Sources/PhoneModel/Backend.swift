import DBus
import Synchronization
import MonkeyCallAPI
import MonkeyCallClient

/// What the Phone app asks of the service: the contract's calls the app makes, as plain Swift.
/// `ClientBackend` makes them over D-Bus; tests give a fake.
public protocol PhoneBackend: Sendable {
    func isRunning() async throws -> Bool
    func start() async throws
    /// Subscribes (again, after a restart) and delivers every event to `handler`, on any thread.
    func follow(_ handler: @escaping @Sendable (TelephonyEvent) -> Void) async throws
    func resubscribe() async throws

    func recents(limit: UInt32, offset: UInt32) async throws -> [Telephony1.RecentEntry]
    func missedCount() async throws -> UInt32
    func markAllSeen() async throws
    func deleteRecent(_ id: UInt64) async throws
    func clearRecents() async throws
    func callBack(_ id: UInt64) async throws -> String

    func favorites() async throws -> [Telephony1.Favorite]
    func addFavorite(handle: String, handleType: String, name: String, app: String) async throws -> UInt64
    func removeFavorite(_ id: UInt64) async throws
    func callFavorite(_ id: UInt64) async throws -> String

    func searchContacts(_ query: String, limit: UInt32) async throws -> [Contact]

    func providers() async throws -> [ProviderSnapshot]
    func linkHandlers() async throws -> [String: String]
    func setLinkHandler(scheme: String, app: String) async throws
    /// Starts a call; `provider` nil lets the service choose.
    func startCall(handle: String, handleType: String, provider: ObjectPath?) async throws -> String

    func calls() async throws -> [CallSnapshot]
    func answer(_ uuid: String) async throws
    func end(_ uuid: String) async throws
    func setHeld(_ uuid: String, _ onHold: Bool) async throws
    func setGroup(_ uuid: String, with other: String) async throws
    func setMuted(_ uuid: String, _ muted: Bool) async throws
    func playDTMF(_ uuid: String, _ digits: String) async throws
    func silence(_ uuid: String) async throws
    /// Asks for `actions` as one transaction (CallController.RequestTransaction): the service
    /// checks them together and does all of them or none (Hold & Answer, End & Answer).
    func requestTransaction(_ actions: [CallAction]) async throws

    /// MonkeyCall's GNOME Shell extension (answering calls from the lock screen), for the offer
    /// to turn it on; never throws: what cannot be asked is `.unavailable`.
    func lockScreenExtension() async -> ExtensionOffer
    /// Turns it on for the user (GNOME Shell's EnableExtension); throws when the shell would not.
    func enableLockScreenExtension() async throws
}

/// One action of a transaction the Phone app asks for (`PhoneBackend.requestTransaction`), with
/// the call's UUID; the contract's action kinds and args (CallController.RequestTransaction).
public enum CallAction: Equatable, Sendable {
    case answer(String)
    case end(String)
    case setHeld(String, Bool)

    /// The action as RequestTransaction takes it: its kind and args.
    var value: ActionValue {
        switch self {
        case .answer(let uuid): ActionValue(kind: ActionName.answer.rawValue, args: [Telephony1.Key.callUUID: .string(uuid)])
        case .end(let uuid): ActionValue(kind: ActionName.end.rawValue, args: [Telephony1.Key.callUUID: .string(uuid)])
        case .setHeld(let uuid, let onHold):
            ActionValue(kind: ActionName.setHeld.rawValue, args: [Telephony1.Key.callUUID: .string(uuid), Telephony1.Key.onHold: .bool(onHold)])
        }
    }
}

extension PhoneBackend {
    /// For a backend without transactions (a test's fake): the actions one after the other, as
    /// the shortcuts do them; the first that fails stops the rest.
    public func requestTransaction(_ actions: [CallAction]) async throws {
        for action in actions {
            switch action {
            case .answer(let uuid): try await answer(uuid)
            case .end(let uuid): try await end(uuid)
            case .setHeld(let uuid, let onHold): try await setHeld(uuid, onHold)
            }
        }
    }
}

/// Whether the Phone app may offer to turn on MonkeyCall's GNOME Shell extension.
public enum ExtensionOffer: Sendable, Equatable {
    /// No GNOME Shell on the bus, the extension not installed, or in a state that turning it on
    /// would not mend (in error, out of date): nothing to offer.
    case unavailable
    /// Installed and off: turning it on makes it run.
    case off
    case on
}

/// GNOME Shell answered EnableExtension with false.
public struct ExtensionNotEnabled: Error, Sendable {}

/// The backend over the session bus, through `TelephonyClient`.
public final class ClientBackend: PhoneBackend {
    public let client: TelephonyClient
    private let subscriptions = SubscriptionBag()

    public init(client: TelephonyClient) { self.client = client }

    public func isRunning() async throws -> Bool { try await client.isRunning() }
    public func start() async throws { try await client.start() }

    public func follow(_ handler: @escaping @Sendable (TelephonyEvent) -> Void) async throws {
        subscriptions.keep(try await client.events(handler))
        client.connection.onDisconnect { _ in handler(.serviceStopped) }
    }

    public func resubscribe() async throws { try await client.call(Telephony1.Manager.subscribe) }

    public func recents(limit: UInt32, offset: UInt32) async throws -> [Telephony1.RecentEntry] {
        try await client.call(Telephony1.Recents.list, limit, offset).compactMap { try? Telephony1.RecentEntry(entries: $0) }
    }
    public func missedCount() async throws -> UInt32 { try await client.get(Telephony1.Recents.missedCount) }
    public func markAllSeen() async throws { try await client.call(Telephony1.Recents.markAllSeen) }
    public func deleteRecent(_ id: UInt64) async throws { try await client.call(Telephony1.Recents.delete, id) }
    public func clearRecents() async throws { try await client.call(Telephony1.Recents.clear) }
    public func callBack(_ id: UInt64) async throws -> String { try await client.call(Telephony1.Recents.callBack, id) }

    public func favorites() async throws -> [Telephony1.Favorite] {
        try await client.call(Telephony1.Favorites.list).compactMap { try? Telephony1.Favorite(entries: $0) }
    }
    public func addFavorite(handle: String, handleType: String, name: String, app: String) async throws -> UInt64 {
        try await client.call(Telephony1.Favorites.add, handle, handleType, name, app)
    }
    public func removeFavorite(_ id: UInt64) async throws { try await client.call(Telephony1.Favorites.remove, id) }
    public func callFavorite(_ id: UInt64) async throws -> String { try await client.call(Telephony1.Favorites.call, id) }

    public func searchContacts(_ query: String, limit: UInt32) async throws -> [Contact] { try await client.searchContacts(query, limit: limit) }

    public func providers() async throws -> [ProviderSnapshot] { try await client.providers() }
    public func linkHandlers() async throws -> [String: String] { try await client.call(Telephony1.Manager.listLinkHandlers) }
    public func setLinkHandler(scheme: String, app: String) async throws { try await client.call(Telephony1.Manager.setLinkHandler, scheme, app) }
    public func startCall(handle: String, handleType: String, provider: ObjectPath?) async throws -> String {
        var options: [String: DBusValue] = [Telephony1.Key.handleType: .string(handleType)]
        if let provider { options[Telephony1.Key.provider] = .objectPath(provider) }
        return try await client.call(Telephony1.CallController.startCall, handle, options).0
    }

    public func calls() async throws -> [CallSnapshot] { try await client.calls() }
    public func answer(_ uuid: String) async throws { try await client.call(Telephony1.CallController.answerCall, uuid) }
    public func end(_ uuid: String) async throws { try await client.call(Telephony1.CallController.endCall, uuid) }
    public func setHeld(_ uuid: String, _ onHold: Bool) async throws { try await client.call(Telephony1.CallController.setHeld, uuid, onHold) }
    public func setGroup(_ uuid: String, with other: String) async throws { try await client.call(Telephony1.CallController.setGroup, uuid, other) }
    public func setMuted(_ uuid: String, _ muted: Bool) async throws { try await client.call(Telephony1.CallController.setMuted, uuid, muted) }
    public func playDTMF(_ uuid: String, _ digits: String) async throws {
        try await client.call(Telephony1.CallController.playDTMF, uuid, digits, DTMFType.singleTone.rawValue)
    }
    public func silence(_ uuid: String) async throws { try await client.call(Telephony1.Call.silence, at: Telephony1.callPath(uuid)) }
    public func requestTransaction(_ actions: [CallAction]) async throws {
        try await client.call(Telephony1.CallController.requestTransaction, actions.map(\.value))
    }

    public func lockScreenExtension() async -> ExtensionOffer {
        // A shell that does not answer within seconds is one to make no offer for.
        switch try? await ShellExtension.status(on: client.connection, timeout: .seconds(10)) {
        case .on?: return .on
        case let status? where status.turnsOn: return .off
        default: return .unavailable
        }
    }

    public func enableLockScreenExtension() async throws {
        guard try await ShellExtension.enable(on: client.connection) else { throw ExtensionNotEnabled() }
    }
}

/// The backend's signal subscriptions, kept while it lives.
private final class SubscriptionBag: Sendable {
    private let kept = Mutex<[Subscription]>([])
    func keep(_ subscriptions: [Subscription]) { kept.withLock { $0 += subscriptions } }
}
