import DBus
import Localization
import MonkeyCallAPI
import MonkeyCallClient

/// The Phone app's state: the service's state and the four views, on the main actor. It knows
/// nothing of GTK: the window reads it and calls it; it says what changed through `onChange`
/// closures. Work with the service is `await`ed off the main thread (the D-Bus connection has a
/// queue of its own) and resumes here.
@MainActor
public final class PhoneModel {
    public enum ServiceState: Equatable, Sendable {
        case connecting
        case running
        /// Nobody owns the bus name: the window says so and offers to start it.
        case notRunning
    }

    public let backend: PhoneBackend
    public private(set) var service: ServiceState = .connecting
    public let recents: RecentsModel
    public let favorites: FavoritesModel
    public let contacts: ContactsModel
    public let keypad: KeypadModel
    public let calls: CallsModel
    /// The offer, made once, to answer calls from GNOME Shell's lock screen.
    public let lockScreenOffer: LockScreenOfferModel

    public var onServiceChange: () -> Void = {}
    /// A short message for the user (an error in plain words).
    public var onToast: (String) -> Void = { _ in }

    /// `offerMemory`: where the lock screen offer is remembered (`OfferMemory.standard()`).
    public init(backend: PhoneBackend, offerMemory: OfferMemory? = OfferMemory.standard()) {
        self.backend = backend
        recents = RecentsModel(backend: backend)
        favorites = FavoritesModel(backend: backend)
        contacts = ContactsModel(backend: backend)
        keypad = KeypadModel(backend: backend)
        calls = CallsModel(backend: backend)
        lockScreenOffer = LockScreenOfferModel(backend: backend, memory: offerMemory)
        for part in [recents, favorites, contacts, keypad, calls, lockScreenOffer] as [ModelPart] {
            part.report.toast = { [weak self] in self?.onToast($0) }
        }
    }

    /// Follows the service, then loads every view.
    public func start() async {
        do {
            try await backend.follow { event in AppTask.start { @MainActor [weak self] in self?.handle(event) } }
        } catch {
            onToast(Self.describe(error))
        }
        await connect()
    }

    /// Asks the bus to start the service (D-Bus activation).
    public func startService() async {
        do {
            try await backend.start()
        } catch {
            onToast(tr("Cannot start the MonkeyCall service: %1$s", Self.describe(error)))
        }
        await connect()
    }

    private func connect() async {
        let running = (try? await backend.isRunning()) ?? false
        guard running else {
            setService(.notRunning)
            return
        }
        do {
            try await backend.resubscribe()
        } catch {
            setService(.notRunning)
            return
        }
        setService(.running)
        await reload()
    }

    public func reload() async {
        async let r: Void = recents.load()
        async let f: Void = favorites.load()
        async let k: Void = keypad.loadApps()
        async let c: Void = calls.load()
        async let s: Void = contacts.search(contacts.query)
        _ = await (r, f, k, c, s)
    }

    private func setService(_ state: ServiceState) {
        guard state != service else { return }
        service = state
        onServiceChange()
    }

    func handle(_ event: TelephonyEvent) {
        switch event {
        case .serviceStopped:
            setService(.notRunning)
            calls.serviceStopped()
        case .serviceStarted:
            AppTask.start { await self.connect() }
        case .recentAdded(let entry):
            recents.added(entry)
        case .changed(let path, let interface, let properties):
            if path == Telephony1.rootPath, interface == Telephony1.Recents.interface,
               case .uint32(let missed)? = properties[Telephony1.Recents.missedCount.name]?.unwrappedVariant {
                recents.missedCountChanged(missed)
            } else if interface == Telephony1.Call.interface {
                calls.changed(path, properties)
            }
        case .added(let path, let properties):
            if properties[Telephony1.Call.uuid.name] != nil { calls.added(CallSnapshot(path: path, properties: properties)) }
            else if properties[Telephony1.Provider.name.name] != nil { AppTask.start { await self.keypad.loadApps() } }
        case .removed(let path):
            calls.removed(path)
            if Telephony1.providerID(from: path) != nil { AppTask.start { await self.keypad.loadApps() } }
        case .contactsChanged:
            AppTask.start { await self.contacts.search(self.contacts.query) }
        }
    }

    /// An error as the user reads it: the service's message, else its short name.
    public nonisolated static func describe(_ error: Error) -> String {
        if let error = error as? DBusError {
            let short = error.name.split(separator: ".").last.map(String.init) ?? error.name
            return error.message.isEmpty ? short : error.message
        }
        return String(describing: error)
    }
}

/// A part of the model (Recents, Favorites, the keypad, …): it asks the service through
/// `backend`, tells the user of an error through `report`, and the window of a change through
/// `onChange`.
@MainActor
public class ModelPart {
    let backend: PhoneBackend
    let report = Reporter()
    public var onChange: () -> Void = {}

    init(backend: PhoneBackend) { self.backend = backend }

    /// Does `work` with the service, then says the part changed; an error is told to the user instead.
    func change(_ work: () async throws -> Void) async {
        do {
            try await work()
            onChange()
        } catch { report.error(error) }
    }
}

/// How a part of the model reports an error to the user.
@MainActor
public final class Reporter {
    var toast: (String) -> Void = { _ in }
    func error(_ error: Error) { toast(PhoneModel.describe(error)) }
    func say(_ text: String) { toast(text) }
}

