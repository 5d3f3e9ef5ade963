import BoundedFile
import Glibc

/// A sound file opened and checked for the ringer: a regular file of at most `maximumBytes`,
/// held open for as long as it may play, and handed to libcanberra as `/proc/self/fd/N`.
///
/// Why a descriptor and not the path: libcanberra opens the file it plays on the calling thread,
/// the GLib thread that also shows every call's notification, and without O_NONBLOCK: a FIFO put
/// in a sound's place (by an app that can write into `~/.local/share/sounds`, or by a host app
/// swapping its ringtone mid-ring) would stall that thread until someone opened the other end
/// (issue 53). Here the file is opened off that thread with O_NONBLOCK, and checked with `fstat`
/// on the descriptor. Opening `/proc/self/fd/N` opens that same file again, never whatever is at
/// its path now, and a regular file's descriptor cannot turn into a FIFO; every loop of the ring
/// plays it. (A private copy would also do, but costs a write of up to 16 MiB a ring and a file
/// to clean up; this costs one descriptor while it rings.)
final class SoundFile: Sendable {
    /// What was asked for: a theme name or a path.
    let name: String
    /// The file found for it.
    let path: String
    private let descriptor: Int32

    /// What libcanberra opens: this descriptor's file.
    var playablePath: String { "/proc/self/fd/\(descriptor)" }

    /// Opens `path` for the sound `name`; refused when it is not a regular file of at most `maximumBytes`.
    static func open(_ path: String, name: String, maximumBytes: Int) throws(BoundedFile.Failure) -> SoundFile {
        let descriptor = try BoundedFile.open(path, limit: maximumBytes)
        return SoundFile(name: name, path: path, descriptor: descriptor)
    }

    private init(name: String, path: String, descriptor: Int32) {
        self.name = name
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// The freedesktop sound theme's lookup, as libcanberra does it for the default theme and output
/// profile (`$XDG_DATA_HOME/sounds`, then each of `$XDG_DATA_DIRS`, theme `freedesktop`,
/// `stereo/NAME.oga`, `.ogg`, `.wav`; a name not found is tried without its last `-part`), so that
/// the ringer opens and checks the file itself and libcanberra is never given a name to look up.
/// Locale folders and unthemed sounds are not searched: the theme has none.
enum SoundTheme {
    static let theme = "freedesktop"
    static let profile = "stereo"
    static let suffixes = [".oga", ".ogg", ".wav"]

    /// The files that may hold the sound `name`, in the order they are tried; none for a name that
    /// is not one path component.
    static func candidates(for name: String, dataHome: String?, dataDirectories: String?) -> Candidates {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return Candidates(names: [], folders: []) }
        var names = [name]
        var shorter = Substring(name)
        while let dash = shorter.lastIndex(of: "-"), dash > shorter.startIndex {
            shorter = shorter[..<dash]
            names.append(String(shorter))
        }
        return Candidates(names: names, folders: Self.folders(dataHome: dataHome, dataDirectories: dataDirectories))
    }

    /// The candidates, each path made only when it is reached: a ring stops at the first that
    /// exists, and making all 36 of them took 4 % of the daemon's instructions in a call's life (issue 55).
    struct Candidates: Sequence, IteratorProtocol {
        let names: [String]
        let folders: [String]
        private var position = 0

        init(names: [String], folders: [String]) {
            self.names = names
            self.folders = folders
        }

        mutating func next() -> String? {
            let perName = folders.count * suffixes.count
            guard position < names.count * perName else { return nil }
            defer { position += 1 }
            let name = names[position / perName]
            let place = position % perName
            return "\(folders[place / suffixes.count])/sounds/\(theme)/\(profile)/\(name)\(suffixes[place % suffixes.count])"
        }
    }

    /// `$XDG_DATA_HOME` (else `~/.local/share`), then `$XDG_DATA_DIRS` (else `/usr/local/share:/usr/share`):
    /// absolute folders only, as libcanberra takes them.
    static func folders(dataHome: String?, dataDirectories: String?) -> [String] {
        var folders: [String] = []
        if let dataHome, dataHome.hasPrefix("/") { folders.append(dataHome) }
        let directories = dataDirectories.flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        folders += directories.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return folders
    }

    /// The data folders of this process's environment.
    static func candidates(for name: String) -> Candidates {
        let home = getenv("XDG_DATA_HOME").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? getenv("HOME").map { String(cString: $0) + "/.local/share" }
        return candidates(for: name, dataHome: home, dataDirectories: getenv("XDG_DATA_DIRS").map { String(cString: $0) })
    }

    /// The sound `name` opened from the first candidate that exists. A candidate that exists but
    /// is no regular file, is too large or cannot be opened ends the search, as in libcanberra: a
    /// FIFO in the user's theme does not let a file further down play instead.
    static func open(_ name: String, maximumBytes: Int) throws(SoundLookupFailure) -> SoundFile {
        for path in candidates(for: name) {
            do {
                return try SoundFile.open(path, name: name, maximumBytes: maximumBytes)
            } catch where error.reason == .system(ENOENT) || error.reason == .system(ENOTDIR) {
                continue
            } catch {
                throw .unusable(error)
            }
        }
        throw .notFound(name)
    }
}

/// Why a sound cannot play.
enum SoundLookupFailure: Error, CustomStringConvertible {
    case notFound(String)
    case unusable(BoundedFile.Failure)

    var description: String {
        switch self {
        case .notFound(let name): "no sound \(name) in the \(SoundTheme.theme) sound theme"
        case .unusable(let failure): "\(failure)"
        }
    }
}
