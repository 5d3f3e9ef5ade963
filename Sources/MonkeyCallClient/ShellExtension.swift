import DBus
import MonkeyCallAPI

/// MonkeyCall's GNOME Shell extension (the lock screen's call card, the top bar's call) as the
/// session's GNOME Shell knows it, and turning it on for the user, through GNOME Shell's own
/// `org.gnome.Shell.Extensions` (`Desktop.ShellExtensions`). One place for what
/// `monkeycall setup gnome-shell` does and what the Phone app offers once.
public enum ShellExtension {
    /// What the shell says of the extension.
    public enum Status: Sendable, Equatable {
        /// Nobody owns `org.gnome.Shell` on this bus: another desktop, or none.
        case noShell
        /// The shell does not know the extension (GetExtensionInfo answered {}).
        case notInstalled
        /// It runs (`state` 1).
        case on
        /// Installed, not running; `state` as the shell gave it (nil when it gave none).
        case off(state: Double?)

        /// Off, and turning it on makes it run: never turned on (6, INITIALIZED: what 43 says of a
        /// system-wide extension the user has not turned on), turned off (2), or between the two
        /// (7 DISABLING, 8 ENABLING). Not in error (3) or out of date for this shell (4).
        public var turnsOn: Bool {
            guard case .off(let state?) = self else { return false }
            return [2, 6, 7, 8].contains(state)
        }
    }

    /// The extension's status in the shell on `connection`'s bus. Throws when the shell does not
    /// answer (`timeout`, nil for the connection's own) or answers with an error.
    public static func status(on connection: Connection, uuid: String = Desktop.ShellExtensions.monkeyCall,
                              timeout: Duration? = nil) async throws -> Status {
        let shell = Desktop.ShellExtensions.self
        guard try await connection.nameOwner(shell.busName) != nil else { return .noShell }
        let info = try await connection.call(shell.getExtensionInfo, destination: shell.busName, path: shell.path, uuid, timeout: timeout)
        guard !info.isEmpty else { return .notInstalled }
        guard case .double(let state)? = info["state"]?.unwrappedVariant else { return .off(state: nil) }
        return state == shell.enabled ? .on : .off(state: state)
    }

    /// Asks the shell to turn the extension on for the user (`EnableExtension`, as GNOME's
    /// Extensions app and `gnome-extensions enable` do); what the shell answered: true when it did.
    public static func enable(on connection: Connection, uuid: String = Desktop.ShellExtensions.monkeyCall) async throws -> Bool {
        let shell = Desktop.ShellExtensions.self
        return try await connection.call(shell.enableExtension, destination: shell.busName, path: shell.path, uuid)
    }
}
