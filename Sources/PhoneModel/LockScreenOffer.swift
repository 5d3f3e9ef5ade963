import FoundationEssentials
import Glibc
import Localization
import ScreenText

/// The offer, made once, to turn on MonkeyCall's GNOME Shell extension: answering calls from the
/// lock screen, and the call in the top bar. System-wide extensions are off until the user turns
/// them on; the Phone app asks when it first opens on a GNOME Shell where the extension is
/// installed and off, and never again, whatever the answer (`OfferMemory`).
public final class LockScreenOfferModel: ModelPart {
    /// Whether the offer is on screen.
    public private(set) var isShown = false
    private let memory: OfferMemory?
    private var checked = false

    /// `memory` nil: nowhere to remember the offer (no XDG_STATE_HOME, no HOME), so none is made.
    public init(backend: PhoneBackend, memory: OfferMemory? = OfferMemory.standard()) {
        self.memory = memory
        super.init(backend: backend)
    }

    /// When the main window opens (once a run): shows the offer when it was never made and the
    /// extension is installed but off. What shows it is remembered before it shows: an offer that
    /// could not be remembered would come back at every start, so it is not made.
    public func check() async {
        guard !checked else { return }
        checked = true
        guard let memory, !memory.wasOffered else { return }
        guard await backend.lockScreenExtension() == .off else { return }
        do {
            try memory.remember(.shown)
        } catch {
            // Not the user's concern: the offer is simply not made.
            StandardStream.error.write("monkeycall-phone: the lock screen offer is not made: \(error)\n")
            return
        }
        setShown(true)
    }

    /// Turn On: the bar goes, and the shell is asked to turn the extension on; the user is told
    /// that it is on, or why not.
    public func turnOn() async {
        guard isShown else { return }
        setShown(false)
        try? memory?.remember(.turnedOn)
        do {
            try await backend.enableLockScreenExtension()
            report.say(tr("Calls now ring on the lock screen, and show in the top bar"))
        } catch is ExtensionNotEnabled {
            report.say(tr("GNOME Shell did not turn on answering from the lock screen"))
        } catch {
            report.say(tr("Could not turn on answering from the lock screen: %1$s", PhoneModel.describe(error)))
        }
    }

    /// Not Now: the bar goes, for good.
    public func notNow() {
        guard isShown else { return }
        setShown(false)
        try? memory?.remember(.declined)
    }

    private func setShown(_ shown: Bool) {
        isShown = shown
        onChange()
    }
}

/// Whether the offer was made: a small file of the user's alone (0600, in a 0700 folder),
/// `$XDG_STATE_HOME/monkeycall/lock-screen-offer` (`~/.local/state` by default), holding the last
/// thing that happened to it (shown, turned on, not now). Its being there is what counts.
public struct OfferMemory: Sendable {
    public enum Event: String, Sendable {
        case shown, turnedOn = "turned on", declined = "not now"
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// `$XDG_STATE_HOME/monkeycall/lock-screen-offer`, else under `$HOME/.local/state`; nil when
    /// neither is an absolute path (the XDG spec ignores a relative one).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> OfferMemory? {
        let state: String
        if let given = environment["XDG_STATE_HOME"], given.hasPrefix("/") {
            state = given
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            state = home + "/.local/state"
        } else {
            return nil
        }
        return OfferMemory(path: state + "/monkeycall/lock-screen-offer")
    }

    public var wasOffered: Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Writes `event` over the file: a temporary file beside it (0600), renamed over it. The
    /// folder is made 0700 (its parents too, as the XDG spec asks), and tightened when looser.
    public func remember(_ event: Event) throws(OfferMemoryError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw OfferMemoryError("cannot create \(folder): \(error)")
        }
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
            throw OfferMemoryError("\(folder) is not a folder of this user's")
        }
        if info.st_mode & 0o077 != 0, chmod(folder, 0o700) != 0 {
            throw OfferMemoryError("cannot make \(folder) private: \(String(cString: strerror(errno)))")
        }
        let temporary = "\(path).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw OfferMemoryError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let line = Array((event.rawValue + "\n").utf8)
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let problem = String(cString: strerror(errno))
        close(fd)
        guard written == line.count else {
            unlink(temporary)
            throw OfferMemoryError("cannot write \(temporary): \(problem)")
        }
        guard rename(temporary, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(temporary)
            throw OfferMemoryError("cannot replace \(path): \(problem)")
        }
    }
}

public struct OfferMemoryError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
