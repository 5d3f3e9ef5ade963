import CallDirectory
import FoundationEssentials
import Glibc
import Logging

/// The user's own settings, persisted as JSON: who rings, and whether media pauses during calls.
struct ScreeningSettings: Codable, Equatable, Sendable {
    var doNotDisturb = false
    var doNotDisturbAllowFavorites = true
    /// iOS's "Allow calls from: All Contacts": off unless the user turns it on.
    var doNotDisturbAllowContacts = false
    var doNotDisturbAllowRepeatedCalls = true
    var silenceUnknownCallers = false
    var blockList = BlockList()
    var pausesMediaDuringCalls = true
    var showsCallControls = true
    var playsRingtone = true

    init() {}

    /// A key missing from the file (written by an older version) keeps its default.
    init(from decoder: Decoder) throws {
        var dropped: [String] = []
        try self.init(from: decoder, dropping: &dropped)
    }

    /// Reads what it can: a key missing keeps its default, an entry that is invalid (a
    /// wrong type, a block list pattern that is no pattern) is dropped and named in
    /// `dropped`, and the rest is kept. Throws only when the whole is no JSON object.
    init(from decoder: Decoder, dropping dropped: inout [String]) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys, _ defaultValue: Bool) -> Bool {
            guard container.contains(key) else { return defaultValue }
            if let value = try? container.decode(Bool.self, forKey: key) { return value }
            dropped.append("\(key.stringValue) (not true or false)")
            return defaultValue
        }
        let defaults = ScreeningSettings()
        doNotDisturb = value(.doNotDisturb, defaults.doNotDisturb)
        doNotDisturbAllowFavorites = value(.doNotDisturbAllowFavorites, defaults.doNotDisturbAllowFavorites)
        doNotDisturbAllowContacts = value(.doNotDisturbAllowContacts, defaults.doNotDisturbAllowContacts)
        doNotDisturbAllowRepeatedCalls = value(.doNotDisturbAllowRepeatedCalls, defaults.doNotDisturbAllowRepeatedCalls)
        silenceUnknownCallers = value(.silenceUnknownCallers, defaults.silenceUnknownCallers)
        pausesMediaDuringCalls = value(.pausesMediaDuringCalls, defaults.pausesMediaDuringCalls)
        showsCallControls = value(.showsCallControls, defaults.showsCallControls)
        playsRingtone = value(.playsRingtone, defaults.playsRingtone)
        guard container.contains(.blockList) else { return }
        guard var patterns = try? container.nestedUnkeyedContainer(forKey: .blockList) else {
            dropped.append("blockList (not a list of patterns)")
            return
        }
        while !patterns.isAtEnd {
            let index = patterns.currentIndex
            guard let pattern = try? patterns.decode(String.self) else {
                _ = try? patterns.decode(SkippedValue.self)
                dropped.append("blockList[\(index)] (not a string)")
                continue
            }
            do {
                try blockList.add(pattern)
            } catch {
                dropped.append("blockList[\(index)] '\(pattern.prefix(64))' (\(error.message))")
            }
        }
    }

    /// The settings in a file's bytes, and what was dropped; throws when they are no JSON object.
    static func read(_ data: Data) throws -> (settings: ScreeningSettings, dropped: [String]) {
        try JSONDecoder().decode(Lenient.self, from: data).read
    }

    private struct Lenient: Decodable {
        let read: (settings: ScreeningSettings, dropped: [String])
        init(from decoder: Decoder) throws {
            var dropped: [String] = []
            let settings = try ScreeningSettings(from: decoder, dropping: &dropped)
            read = (settings, dropped)
        }
    }

    /// Any JSON value, read and thrown away.
    private struct SkippedValue: Decodable {
        init(from decoder: Decoder) throws {}
    }
}

/// A settings change that could not be saved.
struct SettingsSaveFailure: Error {
    let message: String
    /// The change was undone in memory (no later change had replaced it).
    let undone: Bool
}

extension ScreeningSettings {
    /// The settings in `path`, or the defaults. An invalid entry is dropped and logged, the
    /// rest kept; a file that is no JSON object is set aside (`.unreadable`), not overwritten.
    static func load(_ path: String, logger: Logger) -> ScreeningSettings {
        guard let data = FileManager.default.contents(atPath: path) else { return ScreeningSettings() }
        do {
            let (settings, dropped) = try ScreeningSettings.read(data)
            for entry in dropped { logger.error("settings \(path): dropped the invalid entry \(entry); the others are kept") }
            return settings
        } catch {
            let aside = path + ".unreadable"
            let moved = rename(path, aside) == 0
            logger.error("settings \(path) are unreadable (\(error)); using the defaults\(moved ? ", the file is kept as \(aside)" : "")")
            return ScreeningSettings()
        }
    }

    /// Writes the settings to `path` as JSON (sorted keys, pretty-printed), atomically.
    func save(to path: String) throws(DirectoryError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self) else { throw .storageFailed("cannot encode the settings") }
        try AtomicFile.write(data, to: path)
    }
}
