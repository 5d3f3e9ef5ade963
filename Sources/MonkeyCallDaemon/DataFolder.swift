import FoundationEssentials
import Glibc

/// Where the daemon keeps the user's data (Recents, settings, call directories),
/// and keeping it private: the daemon runs with umask 077, and what an older
/// version left readable by others is tightened at start.
struct DataFolder {
    /// `$XDG_DATA_HOME/monkeycall`, else `$HOME/.local/share/monkeycall`; nil
    /// when neither is set (never `/tmp`, where other users could read or plant
    /// files). XDG_DATA_HOME must be absolute (the XDG spec ignores it otherwise).
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/monkeycall" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/share/monkeycall" }
        return nil
    }

    let path: String
    /// The Recents database's file name in `path`.
    let databaseName: String

    /// Folders 0700, files 0600: the folder, the database with its WAL and shared
    /// memory, the settings, the call directories' folder and its files. Only the
    /// daemon's own names are touched (the folder may be shared with others when
    /// `--database` points elsewhere). Returns what could not be tightened.
    func tighten() -> [String] {
        var failures: [String] = []
        func restrict(_ path: String, to mode: mode_t) {
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR || (info.st_mode & S_IFMT) == S_IFREG else { return }
            guard info.st_mode & 0o7777 & ~mode != 0 else { return }
            if chmod(path, info.st_mode & 0o7777 & mode) != 0 { failures.append("\(path): \(String(cString: strerror(errno)))") }
        }
        restrict(path, to: 0o700)
        for file in [databaseName, databaseName + "-wal", databaseName + "-shm", "settings.json"] {
            restrict("\(path)/\(file)", to: 0o600)
        }
        let directories = "\(path)/directories"
        restrict(directories, to: 0o700)
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directories)) ?? [] {
            restrict("\(directories)/\(file)", to: 0o600)
        }
        return failures
    }
}
