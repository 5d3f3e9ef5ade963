import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import ScreenText

struct Recents: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The calls that ended, newest first.",
                                                    subcommands: [List.self, Clear.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List recent calls.")
        @OptionGroup var bus: BusOptions
        @Flag(help: "Missed calls only.") var missed = false
        // Taken whatever it looks like, so that `--limit -1` is answered by validate(), not "missing value".
        @Option(parsing: .unconditional, help: "How many.") var limit = 20
        @OptionGroup var format: ListFormat

        func validate() throws {
            guard (1...Int(UInt32.max)).contains(limit) else { throw ValidationError(tr("--limit must be a whole number from 1, not %1$s", String(limit))) }
        }

        func run() async throws {
            let client = try await ServiceClient(bus)
            // The service pages; missed calls are picked here from a longer page.
            let page = try await client.call(Telephony1.Recents.list, missed ? max(10_000, UInt32(limit)) : UInt32(limit), 0)
            let entries = page.map { ($0, (try? Telephony1.RecentEntry(entries: $0)) ?? Telephony1.RecentEntry()) }
                .filter { !missed || RecentStatus(rawValue: $0.1.status) == .missed }.prefix(limit)
            format.print(Array(entries), columns: [trc("column", "ID"), trc("column", "ENDED"), trc("column", "STATUS"), trc("column", "DIRECTION"),
                                                      trc("column", "APP"), trc("column", "HANDLE"), trc("column", "NAME"), trc("column", "DURATION")],
                         orWhenEmpty: missed ? tr("no missed calls") : tr("no recent calls"), json: { Output.jsonObject($0.0) }) { _, entry in
                let (connected, ended) = (entry.connectedAt, entry.endedAt)
                let name = Output.clean(entry.callerName)
                return [String(entry.id), Output.time(micros: ended), Output.clean(entry.status), entry.outgoing ? "outgoing" : "incoming",
                        Output.clean(entry.providerName), Output.clean(entry.handle), name == Output.clean(entry.handle) ? "" : name,
                        connected > 0 && ended >= connected ? Output.duration(seconds: (ended - connected) / 1_000_000) : ""]
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget every recent call (asks first on a terminal).")
        @OptionGroup var bus: BusOptions
        @Flag(name: [.short, .long], help: "Do not ask.") var yes = false
        func run() async throws {
            let client = try await ServiceClient(bus)
            if !yes && isatty(STDIN_FILENO) != 0 {
                // TRANSLATORS: the answer is read as y or yes (in English) only; keep "[y/N]".
                StandardStream.output.write(tr("Forget every recent call? [y/N]") + " ")
                guard let answer = readLine()?.trimmingWhitespace().lowercased(), ["y", "yes"].contains(answer) else {
                    print(tr("Recents kept."))
                    throw ExitCode(1)
                }
            }
            try await client.call(Telephony1.Recents.clear)
        }
    }
}

struct CallBack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "callback", abstract: "Call back a recent call (its Id from `monkeycall recents`).")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The recent call's Id.") var id: UInt64

    func run() async throws {
        print(Output.clean(try await ServiceClient(bus).call(Telephony1.Recents.callBack, id)))
    }
}

struct Favorites: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The people you call most: they are named on calls and ring through Do Not Disturb.",
                                                    subcommands: [List.self, Add.self, Remove.self, Call.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List favorites.")
        @OptionGroup var bus: BusOptions
        @OptionGroup var format: ListFormat
        func run() async throws {
            let favorites = try await ServiceClient(bus).call(Telephony1.Favorites.list)
            format.print(favorites.map { ($0, (try? Telephony1.Favorite(entries: $0)) ?? Telephony1.Favorite()) }, columns: [trc("column", "ID"), trc("column", "NAME"), trc("column", "HANDLE"), trc("column", "APP")],
                         orWhenEmpty: tr("no favorites"), json: { Output.jsonObject($0.0) }) { _, favorite in
                [String(favorite.id)] + [favorite.name, favorite.handle, favorite.providerName].map(Output.clean)
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a favorite and print its Id.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "Their name.") var name: String
        @Argument(help: "The handle to call.") var handle: String
        @Option(help: "The app to call them through: one running now, or one in Recents, the favorites or the call directories.",
                completion: .custom(Completion.providers)) var provider: String
        @Option(help: "generic, phone-number or email-address.") var handleType: HandleType = .generic
        func run() async throws {
            let client = try await ServiceClient(bus)
            let favorites = try await client.call(Telephony1.Favorites.list).compactMap { try? Telephony1.Favorite(entries: $0) }
            // A favorite is called through its app by name, whenever that app runs: refuse a name
            // the service has never seen, which could never ring.
            let provider = try await client.knownAppName(provider)
            if let same = favorites.first(where: { $0.handle == handle && $0.providerName == provider }) {
                // TRANSLATORS: %1$s is a number, %2$s an app, %3$s the favorite's id and %4$s its name.
                throw CLIError(tr("%1$s through %2$s is already a favorite (Id %3$s, %4$s)", Output.clean(handle), Output.clean(provider), String(same.id), Output.clean(same.name)))
            }
            print(try await client.call(Telephony1.Favorites.add, handle, handleType.rawValue, name, provider))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a favorite.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "The favorite's Id.") var id: UInt64
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.Favorites.remove, id)
        }
    }

    struct Call: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Call a favorite and print the call's UUID.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "The favorite's Id.") var id: UInt64
        func run() async throws {
            print(Output.clean(try await ServiceClient(bus).call(Telephony1.Favorites.call, id)))
        }
    }
}
