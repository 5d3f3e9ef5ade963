import BoundedFile
import FoundationEssentials
import Localization
import ScreenText
import TelephonyCore

/// What the user knows an app by. A sandboxed app chooses its provider `Name` itself ("Bank",
/// "Alpha"), so a prompt about it names it by the desktop file its store exported — Flatpak's
/// `exports/share/applications/APPID.desktop` (per user and system-wide) or Snap's
/// `NAME_APP.desktop` — else by its app id; the chosen Name appears only beside that.
enum AppNames {
    /// How a prompt names the app behind `provider`: a host app by its Name; a sandboxed one as
    /// "Desktop Name (app.id)", or its app id when no desktop file names it.
    static func label(of provider: Provider) -> String {
        provider.isSandboxed ? label(appID: provider.appID) : provider.name
    }

    /// A sandboxed app as "Desktop Name (app.id)", or its app id when no desktop file names it.
    static func label(appID: String) -> String {
        guard let name = exportedName(appID: appID), name != appID else { return appID }
        return "\(name) (\(appID))"
    }

    /// " It registered as “Alpha”." when the provider's chosen Name is not what `label` (its label,
    /// read once by the caller: it may read a file) shows.
    static func chosenNameNote(of provider: Provider, label: String) -> String {
        guard provider.isSandboxed, !shows(provider.name, label) else { return "" }
        // TRANSLATORS: follows a sentence about a sandboxed app; %1$s is the name it chose for itself.
        return tr("It registered as “%1$s”.", provider.name)
    }

    /// Whether `label` ("Desktop Name (app.id)") already shows the chosen Name `name`.
    private static func shows(_ name: String, _ label: String) -> Bool { label.hasPrefix(name + " (") }

    /// ` “Alpha”` after a sandboxed app's `label` when it chose the Name "Alpha", which its label
    /// does not already show: beside, never instead.
    static func chosenNameBeside(_ name: String, label: String) -> String {
        shows(name, label) ? "" : " \u{201C}\(name)\u{201D}"
    }

    /// The folders the stores export desktop files to, the user's own first.
    static var exportFolders: [String] {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.local/share"
        return [home + "/flatpak/exports/share/applications", "/var/lib/flatpak/exports/share/applications", "/var/lib/snapd/desktop/applications"]
    }

    /// The `Name` of the app's exported desktop file, cleaned and at most 64 characters.
    static func exportedName(appID: String) -> String? {
        // A Snap's files are NAME_APP.desktop; a Flatpak's APPID.desktop.
        let isSnap = appID.hasPrefix("snap.")
        for folder in exportFolders {
            let files: [String]
            if isSnap {
                let prefix = String(appID.dropFirst(5)) + "_"
                files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".desktop") }.sorted()
            } else {
                files = [appID + ".desktop"]
            }
            for file in files {
                guard let name = DesktopEntry.value("Name", inFile: folder + "/" + file) else { continue }
                let clean = String(name.unicodeScalars.filter { $0.properties.generalCategory != .control && !$0.properties.isBidiControl }.map(Character.init)).prefix(64)
                if !clean.trimmingWhitespace().isEmpty { return String(clean) }
            }
        }
        return nil
    }
}

/// A key of a desktop file's `[Desktop Entry]` group (the unlocalised one).
enum DesktopEntry {
    /// Files past this size are not read: a desktop file is a few KiB.
    static let maximumBytes = 64 * 1024

    static func value(_ key: String, inFile file: String) -> String? {
        // An app's own file: a FIFO put in its place must not stall the service, nor a huge one swell it.
        guard let text = BoundedFile.text(file, limit: maximumBytes) else { return nil }
        var inEntry = false
        for line in text.split(separator: "\n").map({ $0.trimmingWhitespace() }) {
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
                continue
            }
            guard inEntry, let equals = line.firstIndex(of: "=") else { continue }
            if line[..<equals].trimmingWhitespace() == key {
                return line[line.index(after: equals)...].trimmingWhitespace()
            }
        }
        return nil
    }
}
