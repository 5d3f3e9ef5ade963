import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import QueueExecutor
import ScreenText

/// Runs the command on `SerialTaskExecutor.shared`, not on Swift concurrency's global executor,
/// whose first task starts libdispatch's once-a-second monitor: `monkeycall watch` runs for hours
/// and must not wake the laptop when nothing happens.
/// The CLI's program: `monkeycall`.
public enum CLIProgram {
    public static func main() {
        Localization.setUp()
        SerialTaskExecutor.runMain {
            do {
                var command = try await MonkeyCall.asyncParseAsRoot(nil)
                if var asyncCommand = command as? AsyncParsableCommand { try await asyncCommand.run() } else { try command.run() }
            } catch let error as CLIError {
                // ArgumentParser's own "Error: " would stay English in front of a translated message.
                StandardStream.error.write(tr("Error: %1$s", error.description) + "\n")
                exit(EXIT_FAILURE)
            } catch {
                MonkeyCall.exit(withError: error)
            }
        }
    }
}

struct MonkeyCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall",
        abstract: "Place, answer and watch calls through the MonkeyCall service.",
        version: Release.description(of: "monkeycall"),
        subcommands: [
            Status.self, Calls.self, Providers.self, Watch.self, Dial.self, Open.self,
            CallCommand<Answer>.self, CallCommand<Decline>.self, CallCommand<End>.self, CallCommand<Hold>.self,
            CallCommand<Resume>.self, CallCommand<Mute>.self, CallCommand<Unmute>.self, DTMF.self, Show.self,
            Recents.self, CallBack.self, Favorites.self, DND.self, Block.self, Identify.self, Directory.self, Links.self, Setup.self,
        ]
    )

    /// Declared here too, so that `monkeycall --address A calls` parses: every subcommand declares the
    /// same group, and ArgumentParser gives them the value wherever on the line it was written.
    @OptionGroup var bus: BusOptions
}

/// Where the service is: the session bus unless told otherwise.
struct BusOptions: ParsableArguments {
    @Option(help: "Bus address (default: the session bus: DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus).")
    var address: String?
}

/// `--json` on every listing.
struct ListFormat: ParsableArguments {
    @Flag(help: "Print one JSON document (an array) instead of a table.") var json = false

    /// A listing: one JSON array of `json(item)`, or a table of `row(item)` under `columns`.
    func print<Item>(_ items: [Item], columns: [String], orWhenEmpty empty: String, json: (Item) -> JSON, row: (Item) -> [String]) {
        if self.json { return Output.printJSON(.array(items.map(json))) }
        var table = Table(columns)
        for item in items { table.add(row(item)) }
        table.print(orWhenEmpty: empty)
    }
}

/// What the shell completes from the running service: live call UUIDs and provider names.
enum Completion {
    @Sendable static func calls(_ words: [String], _ index: Int, _ prefix: String) async -> [String] {
        guard let client = await client(words), let calls = try? await client.calls() else { return [] }
        return calls.map(\.uuid).filter { $0.hasPrefix(prefix) }
    }

    @Sendable static func providers(_ words: [String], _ index: Int, _ prefix: String) async -> [String] {
        guard let client = await client(words), let providers = try? await client.providers() else { return [] }
        return providers.map(\.label).filter { $0.hasPrefix(prefix) }
    }

    @Sendable static func directories(_ words: [String], _ index: Int, _ prefix: String) async -> [String] {
        guard let client = await client(words), let directories = try? await client.call(Telephony1.CallDirectory.listDirectories) else { return [] }
        return directories.map(\.app).filter { $0.hasPrefix(prefix) }
    }

    /// The bus the command line being completed names with --address, else the session bus.
    private static func client(_ words: [String]) async -> ServiceClient? {
        var address: [String] = []
        for (index, word) in words.enumerated() {
            if word == "--address", index + 1 < words.count { address = [word, words[index + 1]] }
            if word.hasPrefix("--address=") { address = [word] }
        }
        guard let options = try? BusOptions.parse(address) else { return nil }
        return try? await ServiceClient(options)
    }
}
