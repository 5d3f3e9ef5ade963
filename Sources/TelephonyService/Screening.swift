import CallDirectory
import Foundation
import Logging
import TelephonyCore

/// The user's own settings, persisted as JSON: who rings, and whether media pauses during calls.
struct ScreeningSettings: Codable, Equatable, Sendable {
    var doNotDisturb = false
    var doNotDisturbAllowFavorites = true
    var doNotDisturbAllowRepeatedCalls = true
    var silenceUnknownCallers = false
    var blockList = BlockList()
    var pausesMediaDuringCalls = true

    init() {}

    /// A key missing from the file (written by an older version) keeps its default.
    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ defaultValue: T) throws -> T {
            try container.decodeIfPresent(T.self, forKey: key) ?? defaultValue
        }
        let defaults = ScreeningSettings()
        doNotDisturb = try value(.doNotDisturb, defaults.doNotDisturb)
        doNotDisturbAllowFavorites = try value(.doNotDisturbAllowFavorites, defaults.doNotDisturbAllowFavorites)
        doNotDisturbAllowRepeatedCalls = try value(.doNotDisturbAllowRepeatedCalls, defaults.doNotDisturbAllowRepeatedCalls)
        silenceUnknownCallers = try value(.silenceUnknownCallers, defaults.silenceUnknownCallers)
        blockList = try value(.blockList, defaults.blockList)
        pausesMediaDuringCalls = try value(.pausesMediaDuringCalls, defaults.pausesMediaDuringCalls)
    }
}

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
/// callers. Lives on the service's queue; what it writes (settings, directory
/// files and flags) is written on `storage`, in order, and results come back
/// to the service queue (hence `@unchecked`).
final class Screening: @unchecked Sendable {
    enum Verdict: Equatable {
        case ring
        /// The block list or a directory blocks the caller.
        case blocked
        /// Do Not Disturb holds the call back.
        case filtered
        /// An unknown caller, silenced: refused like Do Not Disturb, recorded as missed.
        case silenced
    }

    /// "A second call from the same handle within 3 minutes rings."
    static let repeatWindow: UInt64 = 180_000_000

    private(set) var settings = ScreeningSettings()
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
    /// The service queue, where the results of `storage` come back.
    private let queue: DispatchQueue

    /// Settings and directories live in `folder`; without one, settings stay in memory.
    /// `queue`: the service queue.
    init(folder: String?, queue: DispatchQueue, logger: Logger) {
        self.logger = logger
        self.queue = queue
        settingsPath = folder.map { $0 + "/settings.json" }
        var store: DirectoryStore?
        if let folder {
            do {
                // A new app's directory is off until the user turns it on (as on iOS); the ones enabled before stay on.
                store = try DirectoryStore(folder: folder + "/directories", enabledByDefault: false)
                for (file, problem) in store!.problems { logger.error("call directory \(file) is unusable: \(problem.message)") }
                do {
                    let kept = try store!.keepUnflaggedDirectoriesEnabled()
                    if !kept.isEmpty { logger.info("call directories enabled before they needed the user's consent stay enabled: \(kept.joined(separator: ", "))") }
                } catch {
                    logger.error("cannot keep the call directories enabled before this version enabled: \(error.message)")
                }
            } catch {
                logger.error("call directories are unavailable: \(error.message)")
            }
            if let data = FileManager.default.contents(atPath: folder + "/settings.json") {
                do {
                    settings = try JSONDecoder().decode(ScreeningSettings.self, from: data)
                } catch {
                    logger.error("ignoring unreadable settings \(folder)/settings.json: \(error)")
                }
            }
        }
        directories = store
    }

    func update(_ change: (inout ScreeningSettings) throws -> Void) rethrows {
        var next = settings
        try change(&next)
        guard next != settings else { return }
        settings = next
        save()
    }

    /// The settings as they are now, written on `storage`: each save after the one before, so the last wins.
    private func save() {
        guard let settingsPath else { return }
        let settings = self.settings, logger = self.logger
        storage.async {
            do {
                let folder = (settingsPath as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                // Written whole and renamed into place: a crash leaves the old settings or the new.
                try encoder.encode(settings).write(to: URL(fileURLWithPath: settingsPath), options: .atomic)
            } catch {
                logger.error("cannot save settings to \(settingsPath): \(error)")
            }
        }
    }

    /// Waits until everything handed to `storage` so far is written.
    func settle() async {
        await withCheckedContinuation { continuation in storage.async { continuation.resume() } }
    }

    // MARK: Directory writes, on `storage`

    /// Applies the provider's open update and saves it on `storage`; `done` runs on the service
    /// queue once it is the provider's directory (or with the error, the directory unchanged).
    func completeDirectory(of providerName: String, then done: @escaping @Sendable (Result<Void, DirectoryError>) -> Void) {
        guard let store = directories else { return done(.failure(.storageFailed("Call directories are unavailable on this system."))) }
        let completion: DirectoryCompletion
        do {
            completion = try store.beginCompletion(providerName: providerName)
        } catch {
            return done(.failure(error))
        }
        storage.async { [self] in
            let result = Result { () throws(DirectoryError) in try completion.run() }
            queue.async { [self] in
                do throws(DirectoryError) {
                    guard let (_, replaced) = try directories?.finishCompletion(completion, result) else { return }
                    // Unmapping the old file is work too.
                    if let replaced { storage.async { withExtendedLifetime(replaced) {} } }
                    done(.success(()))
                } catch {
                    done(.failure(error))
                }
            }
        }
    }

    /// Closes the provider's open update, if any, without applying it; its memory is freed on `storage`.
    func dropUpdate(of providerName: String) {
        guard let update = directories?.takeUpdate(providerName: providerName) else { return }
        let box = UncheckedBox(update)
        storage.async { box.value.cancel() }
    }

    /// Turns a directory on or off at once, and writes the flags on `storage`; `done` runs on the
    /// service queue once they are written (on an error the flag is put back).
    func setDirectoryEnabled(_ enabled: Bool, providerName: String, then done: @escaping @Sendable (Result<Void, DirectoryError>) -> Void) {
        guard let store = directories else { return done(.failure(.storageFailed("Call directories are unavailable on this system."))) }
        let write: DirectoryStore.FlagsWrite
        do {
            write = try store.changeEnabled(enabled, providerName: providerName)
        } catch {
            return done(.failure(error))
        }
        storage.async { [self] in
            let result = Result { () throws(DirectoryError) in try write.run() }
            queue.async { [self] in
                if case .failure = result { directories?.undo(write) }
                done(result)
            }
        }
    }

    /// Forgets a provider's directory at once and deletes its file on `storage`; `done` runs on the
    /// service queue once it is deleted.
    func removeDirectory(of providerName: String, then done: @escaping @Sendable (Result<Void, DirectoryError>) -> Void) {
        guard let store = directories else { return done(.failure(.storageFailed("Call directories are unavailable on this system."))) }
        let removal: DirectoryStore.DirectoryRemoval
        do {
            removal = try store.beginRemoval(providerName: providerName)
        } catch {
            return done(.failure(error))
        }
        storage.async { [self] in
            let result = Result { () throws(DirectoryError) in try removal.run() }
            queue.async { done(result) }
        }
    }

    /// Whether the handle is blocked by the user's list or an enabled directory.
    func isBlocked(_ handle: String) -> Bool {
        settings.blockList.matches(handle: handle) || (directories?.identify(handle: handle).blocked ?? false)
    }

    /// The directories' name for a caller.
    func label(for handle: String) -> String? {
        directories?.identify(handle: handle).label
    }

    var doNotDisturbSource: DoNotDisturbSource {
        if settings.doNotDisturb { return .monkeycall }
        if gnomeDoNotDisturb { return .gnome }
        if notificationServerInhibited { return .notificationServer }
        return .none
    }

    /// The verdict for an incoming call; every attempt counts for the repeated-call exception.
    func screen(_ handle: String, isFavorite: Bool, isKnown: @autoclosure () -> Bool, now: UInt64) -> Verdict {
        let key = PhoneNumber.normalize(handle).map(String.init) ?? handle.lowercased()
        let previous = attempts.record(key, at: now)
        if isBlocked(handle) { return .blocked }
        // The desktop's Do Not Disturb has the same exceptions as ours.
        if doNotDisturbSource != .none {
            let favoriteLetThrough = isFavorite && settings.doNotDisturbAllowFavorites
            let repeatLetThrough = settings.doNotDisturbAllowRepeatedCalls && previous != nil
            if !favoriteLetThrough && !repeatLetThrough { return .filtered }
        }
        if settings.silenceUnknownCallers && !isFavorite && !isKnown() { return .silenced }
        return .ring
    }
}

/// A value handed to one other thread and used by it alone (an update being freed).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
