import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import ScreenText

struct Directory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The apps' call directories: numbers they block and callers they name.",
                                                    subcommands: [List.self, Enable.self, Disable.self, Load.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the directories.")
        @OptionGroup var bus: BusOptions
        @OptionGroup var format: ListFormat
        func run() async throws {
            format.print(try await ServiceClient(bus).call(Telephony1.CallDirectory.listDirectories), columns: [trc("column", "APP"), trc("column", "STATE"), trc("column", "BLOCKED"), trc("column", "IDENTIFIED")],
                         orWhenEmpty: tr("no call directories"), json: { directory in
                ["App": .string(directory.app), "Enabled": .bool(directory.enabled), "Blocked": .unsigned(UInt64(directory.blockingCount)), "Identified": .unsigned(UInt64(directory.identificationCount))]
            }) { directory in
                [directory.app, directory.enabled ? "enabled" : "disabled", String(directory.blockingCount), String(directory.identificationCount)]
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Use an app's directory (a new app's directory is off until you enable it).")
        @OptionGroup var bus: BusOptions
        @Argument(help: "The app, as `monkeycall directory list` shows it: an app id (sandboxed apps) or a provider name.", completion: .custom(Completion.directories)) var provider: String
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.CallDirectory.setDirectoryEnabled, provider, true)
        }
    }

    /// The `<provider>` argument of `disable` and `remove`.
    struct App: ParsableArguments {
        @Argument(help: "The app's name.", completion: .custom(Completion.directories)) var provider: String
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop using an app's directory.")
        @OptionGroup var bus: BusOptions
        @OptionGroup var app: App
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.CallDirectory.setDirectoryEnabled, app.provider, false)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an app's directory; the app may give a new one.")
        @OptionGroup var bus: BusOptions
        @OptionGroup var app: App
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.CallDirectory.removeDirectory, app.provider)
        }
    }

    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a provider's directory from a file of lines NUMBER (blocked) or NUMBER,LABEL (identified).")
        @OptionGroup var bus: BusOptions
        @Option(help: "The provider name the directory belongs to.") var provider: String
        @Argument(help: "The file; numbers with country code, e.g. 14085555555.") var file: String

        func run() async throws {
            let entries = try DirectoryFile.read(file)
            let client = try await ServiceClient(bus)
            // Loading acts as the app: refuse a name the service has never seen (a typo would make a new app).
            let provider = try await client.knownAppName(provider)
            // Acting as the provider: updates are taken from a provider's own connection only.
            let path = try await client.call(Telephony1.Manager.registerProvider, [Telephony1.Key.name: .string(provider)])
            let update = try await client.call(Telephony1.Provider.beginCallDirectoryUpdate, at: path, false)
            let progress = Progress(total: entries.blocking.count + entries.identification.count)
            let batch = 100_000
            for start in stride(from: 0, to: entries.blocking.count, by: batch) {
                let slice = Array(entries.blocking[start..<min(start + batch, entries.blocking.count)])
                try await client.call(Telephony1.CallDirectoryUpdate.addBlockingEntries, at: update, slice)
                progress.advance(slice.count)
            }
            for start in stride(from: 0, to: entries.identification.count, by: batch) {
                let slice = entries.identification[start..<min(start + batch, entries.identification.count)]
                try await client.call(Telephony1.CallDirectoryUpdate.addIdentificationEntries, at: update, slice.map(\.number), slice.map(\.label))
                progress.advance(slice.count)
            }
            try await client.call(Telephony1.CallDirectoryUpdate.complete, at: update)
            try await client.call(Telephony1.Provider.invalidate, at: path)
            // Loaded by the user, so in use at once (an app's own waits for the user's yes).
            try await client.call(Telephony1.CallDirectory.setDirectoryEnabled, provider, true)
            progress.finish()
            // TRANSLATORS: %1$s is an app; then how many numbers its directory blocks and identifies.
            print(tr("%1$s: %2$s blocked, %3$s identified", Output.clean(provider), String(entries.blocking.count), String(entries.identification.count)))
        }
    }
}

/// The text form of a directory, sorted for the user (the service wants ascending numbers).
enum DirectoryFile {
    static func read(_ path: String) throws -> (blocking: [Int64], identification: [(number: Int64, label: String)]) {
        let data = try contents(of: path)
        var blocking: [Int64] = []
        var identification: [(number: Int64, label: String)] = []
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let fields = line.split(separator: ",", maxSplits: 1)
            let digits = fields[0].filter { $0.isNumber }
            guard let number = Int64(digits), number > 0 else { throw CLIError(tr("%1$s:%2$s: '%3$s' is not a number", path, String(index + 1), String(fields[0]))) }
            if fields.count == 2 {
                identification.append((number, String(fields[1]).trimmingWhitespace()))
            } else {
                blocking.append(number)
            }
        }
        blocking.sort()
        identification.sort { $0.number < $1.number }
        return (dedup(blocking), dedupIdentification(identification))
    }

    /// The file's bytes, or an error that says why not (no such file, permission denied, a folder).
    static func contents(of path: String) throws -> Data {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw CLIError(tr("cannot read %1$s: %2$s", path, String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { throw CLIError(tr("cannot read %1$s: it is a folder", path)) }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError(tr("cannot read %1$s", path)) }
        return data
    }

    private static func dedup(_ numbers: [Int64]) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(numbers.count)
        for number in numbers where result.last != number { result.append(number) }
        return result
    }

    /// The last label given for a number wins.
    private static func dedupIdentification(_ entries: [(number: Int64, label: String)]) -> [(number: Int64, label: String)] {
        var result: [(number: Int64, label: String)] = []
        for entry in entries {
            if result.last?.number == entry.number { result[result.count - 1] = entry } else { result.append(entry) }
        }
        return result
    }
}

/// A progress bar on a terminal; nothing when the output is a pipe.
final class Progress {
    private let total: Int
    private var done = 0
    private let visible = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = max(total, 1) }

    func advance(_ count: Int) {
        done += count
        guard visible else { return }
        let width = 40, filled = width * done / total
        StandardStream.error.write("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(100 * done / total)%")
    }

    func finish() { if visible { StandardStream.error.write("\n") } }
}
