import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

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
            guard (1...Int(UInt32.max)).contains(limit) else { throw ValidationError("--limit must be a whole number from 1, not \(limit)") }
        }

        func run() async throws {
            let client = try await ServiceClient(bus)
            // The service pages; missed calls are picked here from a longer page.
            let page = try await client.call(Telephony1.Recents.list, missed ? max(10_000, UInt32(limit)) : UInt32(limit), 0)
            let entries = page.filter { !missed || $0[Telephony1.Key.status] == .string("missed") }.prefix(limit)
            format.print(Array(entries), columns: ["ID", "ENDED", "STATUS", "DIRECTION", "APP", "HANDLE", "NAME", "DURATION"],
                         orWhenEmpty: missed ? "no missed calls" : "no recent calls", json: Output.jsonObject) { entry in
                func text(_ key: String) -> String { entry[key].map(Output.plainText) ?? "" }
                func micros(_ key: String) -> UInt64 { if case .uint64(let value)? = entry[key] { value } else { 0 } }
                let (connected, ended) = (micros(Telephony1.Key.connectedAt), micros(Telephony1.Key.endedAt))
                return [text(Telephony1.Key.id), Output.time(micros: ended), text(Telephony1.Key.status),
                        entry[Telephony1.Key.outgoing] == .bool(true) ? "outgoing" : "incoming",
                        text(Telephony1.Key.providerName), text(Telephony1.Key.handle),
                        text(Telephony1.Key.callerName) == text(Telephony1.Key.handle) ? "" : text(Telephony1.Key.callerName),
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
                FileHandle.standardOutput.write(Data("Forget every recent call? [y/N] ".utf8))
                guard let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased(), ["y", "yes"].contains(answer) else {
                    print("Recents kept.")
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
            format.print(try await ServiceClient(bus).call(Telephony1.Favorites.list), columns: ["ID", "NAME", "HANDLE", "APP"],
                         orWhenEmpty: "no favorites", json: Output.jsonObject) { item in
                [Telephony1.Key.id, Telephony1.Key.name, Telephony1.Key.handle, Telephony1.Key.providerName].map { item[$0].map(Output.plainText) ?? "" }
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
            let favorites = try await client.call(Telephony1.Favorites.list)
            // A favorite is called through its app by name, whenever that app runs: refuse a name
            // the service has never seen, which could never ring.
            let provider = try await client.knownAppName(provider)
            func text(_ item: [String: DBusValue], _ key: String) -> String { item[key].map(Output.plainText) ?? "" }
            if let same = favorites.first(where: { text($0, Telephony1.Key.handle) == Output.clean(handle) && text($0, Telephony1.Key.providerName) == Output.clean(provider) }) {
                throw CLIError("\(Output.clean(handle)) through \(Output.clean(provider)) is already a favorite (Id \(text(same, Telephony1.Key.id)), \(text(same, Telephony1.Key.name)))")
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
