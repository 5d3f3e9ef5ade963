import FoundationEssentials
import PhoneNumber

/// Every error of the call directory. The cases are CallKit's Call Directory
/// errors, named after the API's error names (see `name`).
public enum DirectoryError: Error, Hashable, Sendable {
    /// A kind of entry was not strictly ascending across the whole update.
    case entriesOutOfOrder(String)
    /// The same number twice in a row of one kind.
    case duplicateEntries(String)
    /// More than the provider's maximum of entries, counting the result.
    case maximumEntriesExceeded(String)
    /// A removal in a complete update.
    case unexpectedIncrementalRemoval(String)
    /// An update is already open for this provider.
    case currentlyLoading(String)
    /// A number out of range, a label too long, counts that differ, an update used after it ended.
    case invalidArguments(String)
    /// A directory file that is truncated, corrupted or of another version.
    case corruptDirectory(String)
    /// The file system refused (open, write, fsync, rename, mmap).
    case storageFailed(String)

    /// The API error's short name. `InvalidArgs` and `Failed` map to
    /// `org.freedesktop.DBus.Error.*`, the rest to `org.monkeycall.Telephony1.Error.<name>`.
    public var name: String {
        switch self {
        case .entriesOutOfOrder: "EntriesOutOfOrder"
        case .duplicateEntries: "DuplicateEntries"
        case .maximumEntriesExceeded: "MaximumEntriesExceeded"
        case .unexpectedIncrementalRemoval: "UnexpectedIncrementalRemoval"
        case .currentlyLoading: "CurrentlyLoading"
        case .invalidArguments: "InvalidArgs"
        case .corruptDirectory: "CorruptDirectory"
        case .storageFailed: "Failed"
        }
    }

    /// A sentence a user can read that names what is wrong.
    public var message: String {
        switch self {
        case .entriesOutOfOrder(let text), .duplicateEntries(let text),
             .maximumEntriesExceeded(let text), .unexpectedIncrementalRemoval(let text),
             .currentlyLoading(let text), .invalidArguments(let text),
             .corruptDirectory(let text), .storageFailed(let text):
            text
        }
    }
}

/// The fixed bounds of the call directory.
public enum DirectoryLimits {
    /// Entries of one provider, blocking and identification together, counting the result.
    public static let maximumEntries = 20_000_000
    /// A label's UTF-8 bytes.
    public static let maximumLabelBytes = 256
    /// The labels an open update holds in memory, all together: 64 MiB. Without it, 20 million
    /// labels of 256 bytes would be 5 GB of the service's memory before `Complete`.
    public static let maximumUpdateLabelBytes = 64 << 20
    /// Everything an open update holds, additions, removals and labels together: 128 MiB. Removing
    /// an addition frees no room, so an update cannot grow past it by adding and removing in turn.
    public static let maximumUpdateBytes = 128 << 20
    /// The labels of one provider's directory, all updates applied: 256 MiB. Each update is bounded
    /// (64 MiB of labels), but incremental updates add up: without it, 20 million labels of 256
    /// bytes (5 GB) could be held by one directory, 64 MiB at a time. Real directories are tens of MB.
    public static let maximumDirectoryLabelBytes = 256 << 20
    /// All apps' open updates together: 256 MiB, well below the unit's `MemoryMax=1G` with the
    /// directories themselves and a `Complete` in progress.
    public static let maximumOpenUpdateBytes = 256 << 20
    /// A block list pattern's UTF-8 bytes, as for a call's handle.
    public static let maximumPatternBytes = 1024
    /// Patterns in the user's block list: each is written to disk and checked on every incoming call.
    public static let maximumBlockListPatterns = 10_000
    /// Phone numbers are 1 … 2^63−2 (country code and digits).
    public static let numberRange: ClosedRange<Int64> = PhoneNumber.numberRange
}
