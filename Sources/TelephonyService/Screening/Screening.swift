import CallDirectory
import DBus
import Dispatch
import FoundationEssentials
import Logging
import PhoneNumber
import TelephonyCore

/// Whose Do Not Disturb holds calls back; the first that is on, in this order.
enum DoNotDisturbSource: String {
    /// Our own `DoNotDisturb` setting.
    case monkeycall
    /// GNOME's notification banners are off (`org.gnome.desktop.notifications show-banners`).
    case gnome
    /// The notification server's `Inhibited` property (KDE Plasma's Do Not Disturb).
    case notificationServer = "notification-server"
    case none
}

/// Decides whether an incoming call rings: the block list and the providers'
/// call directories, Do Not Disturb with its exceptions, silencing of unknown
/// callers. What it writes (settings, directory files and flags) is written on
/// `storage`, in order, and the results come back to the actor.
@TelephonyActor
final class Screening {
    /// "A second call from the same handle within 3 minutes rings."
    static let repeatWindow: UInt64 = 180_000_000

    private(set) var settings = ScreeningSettings()
    /// Changes made so far: a failed save undoes its change only if no later one came.
    private var changes = 0
    /// The desktop's own Do Not Disturb, as last reported; not persisted.
    var gnomeDoNotDisturb = false
    var notificationServerInhibited = false
    private let settingsPath: String?
    let directories: DirectoryStore?
    private let logger: Logger
    /// When each handle last called, for the repeated-call exception.
    private var attempts = RecentAttempts(window: Screening.repeatWindow, capacity: 10_000)
    /// Where settings and directories are written, one after another: never the service queue.
    private let storage = DispatchQueue(label: "org.monkeycall.storage", qos: .utility)

    /// Settings and directories live in `folder`; without one, settings stay in memory.
    init(folder: String?, logger: Logger) {
        self.logger = logger
        settingsPath = folder.map { $0 + "/settings.json" }
        var store: DirectoryStore?
        if let folder {
            do {
                // A new app's directory is off until the user turns it on (as on iOS); the ones enabled before stay on.
                store = try DirectoryStore(folder: folder + "/directories", enabledByDefault: false)
                for (file, problem) in store!.problems { logger.error("call directory \(file) is unusable: \(problem.message)") }
                store!.onDamage = { file, problem in logger.error("call directory \(file) is unusable: \(problem.message)") }
                do {
                    let kept = try store!.keepUnflaggedDirectoriesEnabled()
                    if !kept.isEmpty { logger.info("call directories enabled before they needed the user's consent stay enabled: \(kept.joined(separator: ", "))") }
                } catch {
                    logger.error("cannot keep the call directories enabled before this version enabled: \(error.message)")
                }
            } catch {
                logger.error("call directories are unavailable: \(error.message)")
            }
            settings = ScreeningSettings.load(folder + "/settings.json", logger: logger)
        }
        directories = store
    }

    /// Changes the settings at once and saves them on `storage`, each save after the one
    /// before. `saved` runs on the actor once they are written (nil), or with the
    /// failure: the change is then undone, unless a later change has replaced it.
    func update(_ change: (inout ScreeningSettings) throws -> Void,
                saved: @escaping @Sendable @TelephonyActor (SettingsSaveFailure?) -> Void = { _ in }) rethrows {
        var next = settings
        try change(&next)
        guard next != settings else { return saved(nil) }
        let previous = settings
        settings = next
        changes &+= 1
        guard let settingsPath else { return saved(nil) }
        let change = changes, logger = self.logger, written = next
        storage.async { [self] in
            let result = Result { () throws(DirectoryError) in try written.save(to: settingsPath) }
            TelephonyActor.enter { [self] in
                guard case .failure(let error) = result else { return saved(nil) }
                let undone = changes == change
                if undone { settings = previous }
                logger.error("cannot save settings to \(settingsPath): \(error.message)\(undone ? "; the change is undone" : "")")
                saved(SettingsSaveFailure(message: "The settings cannot be saved: \(error.message)", undone: undone))
            }
        }
    }

    /// Deletes what interrupted saves left (settings, directories), on `storage`.
    func removeLeftoverTemporaryFiles() {
        guard let settingsPath else { return }
        let folders = [URL(fileURLWithPath: settingsPath).deletingLastPathComponent().path] + (directories.map { [$0.folder] } ?? [])
        storage.async {
            for folder in folders { DirectoryStore.removeLeftoverTemporaryFiles(in: folder) }
        }
    }

    /// Waits until everything handed to `storage` so far is written.
    func settle() async {
        await withCheckedContinuation { continuation in storage.async { continuation.resume() } }
    }

    // MARK: Directory writes, on `storage`

    /// Applies the provider's open update and saves it on `storage`; `done` runs on the service
    /// queue once it is the provider's directory (or with the error, the directory unchanged),
    /// with whether it is the app's first, saved off, about which the user is to be asked.
    func completeDirectory(of providerName: String, then done: @escaping @Sendable @TelephonyActor (Result<Bool, DirectoryError>) -> Void) {
        writeDirectory(then: { done($0.map { false }) },
                       { store throws(DirectoryError) in try store.beginCompletion(providerName: providerName) }) { [self] completion, result in
            do throws(DirectoryError) {
                // The directory it replaces is unmapped off this queue, wherever it is let go of (`MappingRelease`).
                guard try directories?.finishCompletion(completion, result) != nil else { return }
                done(.success(completion.asksUser))
            } catch {
                done(.failure(error))
            }
        }
    }

    /// Closes the provider's open update, if any, without applying it; its memory is freed on `storage`.
    func dropUpdate(of providerName: String) {
        guard let update = directories?.takeUpdate(providerName: providerName) else { return }
        let box = UncheckedSendable(update)
        storage.async { box.value.cancel() }
    }

    /// Turns a directory on or off at once, and writes the flags on `storage`; `done` runs on the
    /// actor once they are written (on an error the flag is put back).
    func setDirectoryEnabled(_ enabled: Bool, providerName: String, then done: @escaping @Sendable @TelephonyActor (Result<Void, DirectoryError>) -> Void) {
        writeDirectory(then: done, { store throws(DirectoryError) in try store.changeEnabled(enabled, providerName: providerName) }) { [self] write, result in
            if case .failure = result { directories?.undo(write) }
            done(result)
        }
    }

    /// Forgets a provider's directory at once and deletes its file on `storage`; `done` runs on the
    /// actor once it is deleted.
    func removeDirectory(of providerName: String, then done: @escaping @Sendable @TelephonyActor (Result<Void, DirectoryError>) -> Void) {
        writeDirectory(then: done, { store throws(DirectoryError) in try store.beginRemoval(providerName: providerName) }) { _, result in
            done(result)
        }
    }

    /// The steps of every directory write: `begin` takes the write from the store on the service
    /// queue (an error goes to `done` at once), its file work runs on `storage`, and `finish` has
    /// the write and the work's result back on the actor.
    private func writeDirectory<Write: DirectoryFileWork>(
        then done: @escaping @Sendable @TelephonyActor (Result<Void, DirectoryError>) -> Void,
        _ begin: (DirectoryStore) throws(DirectoryError) -> Write,
        finish: @escaping @Sendable @TelephonyActor (Write, Result<Write.Output, DirectoryError>) -> Void
    ) {
        guard let store = directories else { return done(.failure(.storageFailed("Call directories are unavailable on this system."))) }
        let write: Write
        do {
            write = try begin(store)
        } catch {
            return done(.failure(error))
        }
        storage.async {
            let result = Result { () throws(DirectoryError) in try write.run() }
            TelephonyActor.enter { finish(write, result) }
        }
    }

    /// What the user's block list and the enabled directories say of a caller: the handle read
    /// once, each directory looked up once, for the verdict and the name alike.
    struct Listing {
        /// The handle's matching key (`PhoneNumber.key`, else the handle in lower case): what
        /// repeated calls are counted by.
        let key: String
        /// The enabled directories' name for the caller.
        let label: String?
        /// Blocked by the user's list or an enabled directory.
        let blocked: Bool
    }

    func listing(of handle: String) -> Listing {
        let number = PhoneNumber.parse(handle)
        let directory = directories?.identify(number: number?.number) ?? (label: nil, blocked: false)
        return Listing(key: number?.key ?? handle.lowercased(), label: directory.label,
                       blocked: directory.blocked || settings.blockList.matches(handle: handle, number: number))
    }

    /// The name one app's own directory gives a caller, when the user enabled it.
    func label(for handle: String, inDirectoryOf appKey: String) -> String? {
        guard let number = PhoneNumber.normalize(handle) else { return nil }
        return directories?.label(for: number, inDirectoryOf: appKey)
    }

    var doNotDisturbSource: DoNotDisturbSource {
        if settings.doNotDisturb { return .monkeycall }
        if gnomeDoNotDisturb { return .gnome }
        if notificationServerInhibited { return .notificationServer }
        return .none
    }

    /// The verdict for an incoming call; every attempt counts for the repeated-call exception.
    /// `isContact`: the caller is in the user's address book (known, and let through Do Not
    /// Disturb when `doNotDisturbAllowContacts`); `isKnown`: the caller is in Recents.
    func screen(_ caller: Listing, isFavorite: Bool, isContact: Bool = false, isKnown: @autoclosure () -> Bool, now: UInt64) -> ScreeningVerdict {
        let previous = attempts.record(caller.key, at: now)
        if caller.blocked { return .blocked }
        // The desktop's Do Not Disturb has the same exceptions as ours.
        if doNotDisturbSource != .none {
            let favoriteLetThrough = isFavorite && settings.doNotDisturbAllowFavorites
            let contactLetThrough = isContact && settings.doNotDisturbAllowContacts
            let repeatLetThrough = settings.doNotDisturbAllowRepeatedCalls && previous != nil
            if !favoriteLetThrough && !contactLetThrough && !repeatLetThrough { return .filtered }
        }
        if settings.silenceUnknownCallers && !isFavorite && !isContact && !isKnown() { return .silenced }
        return .ring
    }
}

/// The file work of a directory write, which runs on the storage queue.
protocol DirectoryFileWork: Sendable {
    associatedtype Output: Sendable
    func run() throws(DirectoryError) -> Output
}

extension DirectoryCompletion: DirectoryFileWork {}
extension DirectoryStore.FlagsWrite: DirectoryFileWork {}
extension DirectoryStore.DirectoryRemoval: DirectoryFileWork {}
