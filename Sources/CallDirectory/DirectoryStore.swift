import CBoundary
import FoundationEssentials
import Glibc
import PhoneNumber
import Synchronization

/// What `DirectoryStore.list()` reports of one provider's directory.
public struct DirectorySummary: Sendable, Hashable {
    public var name: String
    public var enabled: Bool
    public var blockingCount: Int
    public var identificationCount: Int
}

/// A folder of directory files, one per provider `Name`, the enabled flags
/// (`enabled.json`), and the open updates (one per provider).
///
/// Every directory file is mapped at `init` (O(1) each: only headers are
/// read). A file that cannot be read is left out and reported in `problems`;
/// it is replaced by the provider's next complete update.
///
/// Not thread-safe: its owner uses it from one serial executor. The
/// `Directory` values it hands out are immutable and may cross threads.
public final class DirectoryStore {
    public let folder: String
    /// Directories of providers with no flag yet: enabled (the desktop has no Settings app to ask first).
    public let enabledByDefault: Bool
    public let maximumEntries: Int
    /// What all open updates hold together, bounded.
    public let updateBudget: DirectoryUpdateBudget
    /// Where the open updates' label bytes are copied and staged, and completions applied and
    /// saved: one at a time, in order, whichever app they are for.
    public let lane: DirectoryLane

    private var directories: [String: Directory] = [:]
    private var enabledFlags: [String: Bool] = [:]
    private var openUpdates: [String: DirectoryUpdate] = [:]
    /// Providers whose update is being applied (`beginCompletion` … `finishCompletion`).
    private var completing: Set<String> = []
    /// Files that could not be loaded, by file name.
    public private(set) var problems: [String: DirectoryError] = [:]
    /// Told once of each directory dropped because its file changed under the store
    /// (its file name and why), on the store's executor: its owner logs it.
    public var onDamage: ((String, DirectoryError) -> Void)?

    static let enabledFileName = "enabled.json"

    public init(folder: String, enabledByDefault: Bool = true, maximumEntries: Int = DirectoryLimits.maximumEntries,
                updateBudget: DirectoryUpdateBudget = DirectoryUpdateBudget()) throws(DirectoryError) {
        self.folder = folder
        self.enabledByDefault = enabledByDefault
        self.maximumEntries = maximumEntries
        self.updateBudget = updateBudget
        lane = DirectoryLane()
        do {
            // The user's directories are theirs alone: the folder 0700, files 0600.
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storageFailed("Cannot create \(folder): \(errorText(error))")
        }
        if let data = FileManager.default.contents(atPath: "\(folder)/\(Self.enabledFileName)") {
            guard let flags = try? JSONDecoder().decode([String: Bool].self, from: data) else {
                throw .corruptDirectory("\(folder)/\(Self.enabledFileName) is not a JSON object of provider names and booleans.")
            }
            enabledFlags = flags
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for file in files.sorted() where file.hasSuffix(DirectoryFile.fileExtension) && !file.hasPrefix(".") {
            do throws(DirectoryError) {
                guard let (name, directory) = try DirectoryFile.load(path: "\(folder)/\(file)") else { continue }
                guard DirectoryFile.fileName(for: name) == file else {
                    throw DirectoryError.corruptDirectory("\(folder)/\(file) holds the directory of another name, \(name).")
                }
                directories[name] = directory
            } catch {
                problems[file] = error
            }
        }
    }

    /// Deletes the temporary files of saves that a crash interrupted (`.NAME.….tmp`) in
    /// `folder`. Only for the owner of the folder: another instance may be saving.
    public static func removeLeftoverTemporaryFiles(in folder: String) {
        for file in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where file.hasPrefix(".") && file.hasSuffix(".tmp") {
            unlink("\(folder)/\(file)")
        }
    }

    // MARK: - Directories

    /// The provider's directory: empty if it has none.
    public func load(providerName: String) throws(DirectoryError) -> Directory {
        try Self.checkName(providerName)
        if let directory = intactDirectory(providerName) { return directory }
        let file = DirectoryFile.fileName(for: providerName)
        guard let (name, directory) = try DirectoryFile.load(path: "\(folder)/\(file)") else { return .empty }
        guard name == providerName else {
            throw .corruptDirectory("\(folder)/\(file) holds the directory of another name, \(name).")
        }
        problems[file] = nil
        directories[providerName] = directory
        return directory
    }

    /// Writes the directory (temporary file, fsync, rename, fsync of the
    /// folder) and returns it mapped from its new file, so the heap copy can go.
    @discardableResult
    public func save(_ directory: Directory, providerName: String) throws(DirectoryError) -> Directory {
        try Self.checkName(providerName)
        let file = DirectoryFile.fileName(for: providerName)
        try DirectoryFile.save(directory.storage, providerName: providerName, folder: folder, fileName: file)
        let mapped = (try? DirectoryFile.load(path: "\(folder)/\(file)"))?.directory ?? directory
        directories[providerName] = mapped
        problems[file] = nil
        return mapped
    }

    /// Deletes the provider's directory and its flag.
    public func remove(providerName: String) throws(DirectoryError) {
        try Self.checkName(providerName)
        let path = "\(folder)/\(DirectoryFile.fileName(for: providerName))"
        if unlink(path) != 0, errno != ENOENT {
            throw .storageFailed("Cannot delete \(path): \(errorText())")
        }
        try DirectoryFile.syncFolder(folder)
        directories[providerName] = nil
        if enabledFlags.removeValue(forKey: providerName) != nil { try saveFlags() }
    }

    /// `remove` for an owner that writes elsewhere: the directory and its flag are gone at once
    /// (lookups and `list()` no longer see them), and the returned removal deletes the file and
    /// saves the flags, on any thread. `currentlyLoading` while an update of it is open or applied.
    public func beginRemoval(providerName: String) throws(DirectoryError) -> DirectoryRemoval {
        try Self.checkName(providerName)
        guard openUpdates[providerName] == nil, !completing.contains(providerName) else {
            throw .currentlyLoading("A directory update of \(providerName) is open; remove the directory after it ends.")
        }
        guard directories[providerName] != nil || enabledFlags[providerName] != nil else {
            throw .invalidArguments("There is no call directory of \(providerName).")
        }
        let file = DirectoryFile.fileName(for: providerName)
        let removed = directories.removeValue(forKey: providerName)
        enabledFlags[providerName] = nil
        problems[file] = nil
        guard let flags = try? Self.encode(enabledFlags) else { throw .storageFailed("Cannot encode the enabled flags.") }
        return DirectoryRemoval(path: "\(folder)/\(file)", folder: folder, flags: flags, removed: removed)
    }

    /// A directory taken out of the store (`beginRemoval`), its file still to delete.
    public final class DirectoryRemoval: Sendable {
        let path: String, folder: String, flags: Data
        /// Unmapped when the removal runs, on the thread that runs it.
        private let removed: Mutex<Directory?>

        init(path: String, folder: String, flags: Data, removed: Directory?) {
            (self.path, self.folder, self.flags) = (path, folder, flags)
            self.removed = Mutex(removed)
        }

        public func run() throws(DirectoryError) {
            removed.withLock { $0 = nil }
            if unlink(path) != 0, errno != ENOENT {
                throw .storageFailed("Cannot delete \(path): \(errorText())")
            }
            try DirectoryFile.syncFolder(folder)
            try DirectoryStore.writeFlags(flags, folder: folder)
        }
    }

    public func isEnabled(providerName: String) -> Bool {
        enabledFlags[providerName] ?? enabledByDefault
    }

    /// The saved state of a store opened before directories started disabled: every directory on
    /// disk that has no flag was enabled by the old default, and stays enabled. Runs once: it then
    /// marks the folder (`migratedFileName`), so that no directory found unflagged later (which
    /// this version never leaves: `beginCompletion`) is taken for one enabled before. Returns
    /// the names it enabled.
    public func keepUnflaggedDirectoriesEnabled() throws(DirectoryError) -> [String] {
        let marker = "\(folder)/\(Self.migratedFileName)"
        guard !FileManager.default.fileExists(atPath: marker) else { return [] }
        let unflagged = directories.keys.filter { enabledFlags[$0] == nil }.sorted()
        if !unflagged.isEmpty {
            for name in unflagged { enabledFlags[name] = true }
            do throws(DirectoryError) {
                try saveFlags()
            } catch {
                for name in unflagged { enabledFlags[name] = nil }
                throw error
            }
        }
        // After the flags: a crash between the two runs this again, which then finds nothing unflagged.
        try AtomicFile.write(Data("directories saved before consent existed were kept enabled\n".utf8), to: marker)
        return unflagged
    }

    /// Marks a folder whose directories from before consent have been kept enabled.
    static let migratedFileName = "consent-migrated"

    public func setEnabled(_ enabled: Bool, providerName: String) throws(DirectoryError) {
        let write = try changeEnabled(enabled, providerName: providerName)
        do {
            try write.run()
        } catch {
            undo(write)
            throw error
        }
    }

    /// `setEnabled` for an owner that writes elsewhere: the flag changes at once (lookups
    /// follow it), and the returned write saves the flags as they now are, from any thread.
    /// Run such writes in the order they were made, on one serial executor; when one fails,
    /// `undo` it on the owner's.
    public func changeEnabled(_ enabled: Bool, providerName: String) throws(DirectoryError) -> FlagsWrite {
        try Self.checkName(providerName)
        let before = enabledFlags[providerName]
        enabledFlags[providerName] = enabled
        guard let data = try? Self.encode(enabledFlags) else {
            enabledFlags[providerName] = before
            throw .storageFailed("Cannot encode the enabled flags.")
        }
        return FlagsWrite(providerName: providerName, before: before, after: enabled, folder: folder, data: data)
    }

    /// Puts back the flag of a write that failed, unless another change has replaced it since.
    public func undo(_ write: FlagsWrite) {
        if enabledFlags[write.providerName] == write.after { enabledFlags[write.providerName] = write.before }
    }

    /// The enabled flags as one change left them, to be written.
    public struct FlagsWrite: Sendable {
        public let providerName: String
        let before: Bool?
        let after: Bool
        let folder: String
        let data: Data

        public func run() throws(DirectoryError) {
            try DirectoryStore.writeFlags(data, folder: folder)
        }
    }

    /// Every provider with a directory or a flag, by name.
    public func list() -> [DirectorySummary] {
        Set(directories.keys).union(enabledFlags.keys).sorted().map { name in
            let directory = directories[name] ?? .empty
            return DirectorySummary(
                name: name, enabled: isEnabled(providerName: name),
                blockingCount: directory.blockingCount, identificationCount: directory.identificationCount)
        }
    }

    // MARK: - Lookups across enabled directories

    /// The label one app's directory gives a number, when the user enabled it.
    public func label(for number: Int64, inDirectoryOf providerName: String) -> String? {
        guard isEnabled(providerName: providerName) else { return nil }
        return intactDirectory(providerName)?.label(for: number)
    }

    /// The provider's directory unless its file changed under the store. A changed
    /// one is dropped (read again it could end the process with SIGBUS), answers as
    /// absent, is reported once (`problems`, `onDamage`) and is replaced by the
    /// provider's next update.
    private func intactDirectory(_ providerName: String) -> Directory? {
        guard let directory = directories[providerName] else { return nil }
        if directory.isIntact { return directory }
        directories[providerName] = nil
        let file = DirectoryFile.fileName(for: providerName)
        let problem = DirectoryError.corruptDirectory(
            "\(folder)/\(file) was changed or truncated by another program; the directory of \(providerName) answers as empty until its next update.")
        problems[file] = problem
        onDamage?(file, problem)
        return nil
    }

    /// `Identify` without the user's block list: the phone handle normalised,
    /// then looked up in every enabled directory. Not a phone number: no label, not blocked.
    public func identify(handle: String) -> (label: String?, blocked: Bool) {
        identify(number: PhoneNumber.normalize(handle))
    }

    /// `identify(handle:)` for a handle already read (`PhoneNumber.normalize`): the label of the
    /// first enabled directory, by provider name, that identifies the number, and whether any
    /// blocks it. Each directory is checked intact once and asked once for both.
    public func identify(number: Int64?) -> (label: String?, blocked: Bool) {
        guard let number else { return (nil, false) }
        var label: String?
        var blocked = false
        for name in directories.keys.sorted() where isEnabled(providerName: name) {
            guard let directory = intactDirectory(name) else { continue }
            if label == nil { label = directory.label(for: number) }
            if !blocked { blocked = directory.isBlocked(number) }
            if label != nil && blocked { break }
        }
        return (label, blocked)
    }

    // MARK: - Updates: one open per provider, applied atomically

    /// Opens an update; `currentlyLoading` while the provider has one open.
    /// `account`: who pays for its memory (an app; all its open updates together get one update's bound).
    public func beginUpdate(providerName: String, kind: DirectoryUpdate.Kind, account: String = "") throws(DirectoryError) -> DirectoryUpdate {
        try Self.checkName(providerName)
        guard openUpdates[providerName] == nil else {
            throw .currentlyLoading("A directory update of \(providerName) is already open.")
        }
        guard !completing.contains(providerName) else {
            throw .currentlyLoading("The last directory update of \(providerName) is still being applied.")
        }
        // Its labels are staged in the folder: an open update keeps no copy of them in memory.
        let update = DirectoryUpdate(kind: kind, maximumEntries: maximumEntries, budget: updateBudget, account: account.isEmpty ? providerName : account,
                                     lane: lane, stagingFolder: folder)
        openUpdates[providerName] = update
        return update
    }

    public func openUpdate(providerName: String) -> DirectoryUpdate? { openUpdates[providerName] }

    /// Applies the open update to the provider's directory and saves it. The
    /// update is closed either way; on an error the directory (in memory and
    /// on disk) is unchanged.
    @discardableResult
    public func completeUpdate(providerName: String) throws(DirectoryError) -> Directory {
        let completion = try beginCompletion(providerName: providerName)
        return try finishCompletion(completion, Result { () throws(DirectoryError) in try completion.run() }).installed
    }

    /// `completeUpdate` in three steps, for an owner that must not wait for the work: this one,
    /// on the owner's executor, closes the open update; `DirectoryCompletion.run()` applies and
    /// saves it, called from any other thread, on the store's lane (the store's state is not
    /// touched); `finishCompletion`, on the owner's executor again, makes the result the
    /// provider's directory. Until then the directory answers as it was, and a new update of the
    /// provider is `currentlyLoading`.
    ///
    /// An app's first directory, when directories start disabled, is saved with its "off" flag:
    /// the flags are written first, then the directory, in the same `run()`, so that no crash or
    /// full disk leaves a directory without its flag (which an older version's start-up took for
    /// one enabled before consent). `DirectoryCompletion.asksUser` then says the user is to be asked.
    public func beginCompletion(providerName: String) throws(DirectoryError) -> DirectoryCompletion {
        guard let update = openUpdates.removeValue(forKey: providerName) else {
            throw .invalidArguments("No directory update of \(providerName) is open.")
        }
        var flags: Data?
        if !enabledByDefault, enabledFlags[providerName] == nil {
            enabledFlags[providerName] = false
            flags = try? Self.encode(enabledFlags)
            if flags == nil {
                enabledFlags[providerName] = nil
                update.cancel()
                throw .storageFailed("Cannot encode the enabled flags.")
            }
        }
        completing.insert(providerName)
        return DirectoryCompletion(providerName: providerName, update: update, current: intactDirectory(providerName), folder: folder, flags: flags)
    }

    /// Installs what `run()` made, or reports its error (the directory is then unchanged).
    /// `replaced`: the directory it replaces, which its owner may release on another thread
    /// (a mapped file is unmapped when the last copy goes).
    @discardableResult
    public func finishCompletion(_ completion: DirectoryCompletion, _ result: Result<Directory, DirectoryError>)
        throws(DirectoryError) -> (installed: Directory, replaced: Directory?) {
        completing.remove(completion.providerName)
        // Failed: the next completion asks again (the flag may be on disk, off, which means the same).
        if case .failure = result, completion.asksUser, enabledFlags[completion.providerName] == false {
            enabledFlags[completion.providerName] = nil
        }
        let directory = try result.get()
        let replaced = directories.updateValue(directory, forKey: completion.providerName)
        problems[DirectoryFile.fileName(for: completion.providerName)] = nil
        return (directory, replaced)
    }

    /// Closes the open update (if any) without changing anything: `Cancel`, or the provider disconnected.
    public func cancelUpdate(providerName: String) {
        takeUpdate(providerName: providerName)?.cancel()
    }

    /// Closes the open update (if any) and hands it over unapplied: its owner frees its
    /// memory (`cancel()`) where that does not hold anyone up.
    public func takeUpdate(providerName: String) -> DirectoryUpdate? {
        openUpdates.removeValue(forKey: providerName)
    }

    // MARK: - Helpers

    static func checkName(_ name: String) throws(DirectoryError) {
        guard !name.isEmpty else { throw .invalidArguments("A provider name must not be empty.") }
    }

    private func saveFlags() throws(DirectoryError) {
        guard let data = try? Self.encode(enabledFlags) else {
            throw .storageFailed("Cannot encode the enabled flags.")
        }
        try Self.writeFlags(data, folder: folder)
    }

    static func encode(_ flags: [String: Bool]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(flags)
    }

    static func writeFlags(_ data: Data, folder: String) throws(DirectoryError) {
        try AtomicFile.write(data, to: "\(folder)/\(Self.enabledFileName)")
    }
}

/// One provider's update on its way to becoming its directory (`DirectoryStore.beginCompletion`).
/// `run()` may be called on any thread, once; nothing else uses the update meanwhile (the store
/// gave it up): that is what lets it cross, in an `UncheckedSendable`.
public final class DirectoryCompletion: Sendable {
    public let providerName: String
    private let update: UncheckedSendable<DirectoryUpdate>
    /// The directory the update applies to, when the store had it; else it is read from its file.
    /// Let go of once applied.
    private let current: Mutex<Directory?>
    private let folder: String
    /// The enabled flags with the app's new "off" one, written before the directory (nil: unchanged).
    private let flags: Data?
    /// The app's first directory, saved off: the user is to be asked whether to enable it.
    public var asksUser: Bool { flags != nil }

    init(providerName: String, update: DirectoryUpdate, current: Directory?, folder: String, flags: Data?) {
        self.providerName = providerName
        self.update = UncheckedSendable(update)
        self.current = Mutex(current)
        self.folder = folder
        self.flags = flags
    }

    /// Applies the update and saves the result (temporary file, fsync, rename); returns it
    /// mapped from its new file. The update is finished either way, its memory freed here.
    /// On the store's lane: one completion at a time, whichever app's, each after the label bytes
    /// of every batch taken before it; the caller waits (never the service's executor).
    public func run() throws(DirectoryError) -> Directory {
        let update = update.value
        if let lane = update.lane, !lane.isCurrent {
            return try lane.sync { () throws(DirectoryError) in try run() }
        }
        let current = current.withLock { $0.take() }
        defer { update.cancel() }
        let file = DirectoryFile.fileName(for: providerName)
        let base: Directory
        if let current {
            base = current
        } else if update.kind == .complete {
            // Replaces everything: the old file, perhaps damaged, is not read.
            base = .empty
        } else if let (name, loaded) = try DirectoryFile.load(path: "\(folder)/\(file)") {
            guard name == providerName else { throw .corruptDirectory("\(folder)/\(file) holds the directory of another name, \(name).") }
            base = loaded
        } else {
            base = .empty
        }
        let next = try base.applying(update)
        if let flags { try DirectoryStore.writeFlags(flags, folder: folder) }
        try DirectoryFile.save(next.storage, providerName: providerName, folder: folder, fileName: file)
        return (try? DirectoryFile.load(path: "\(folder)/\(file)"))?.directory ?? next
    }
}
