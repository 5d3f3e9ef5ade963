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
        @Option(help: "How many.") var limit: UInt32 = 20
        @Flag(help: "One JSON object a line.") var json = false

        func run() async throws {
            let client = try await ServiceClient(bus)
            // The service pages; missed calls are picked here from a longer page.
            let page = try await client.call(Telephony1.Recents.list, missed ? 10_000 : limit, 0)
            let entries = page.filter { !missed || $0[Telephony1.Key.status] == .string("missed") }.prefix(Int(limit))
            if entries.isEmpty && !json { print(missed ? "no missed calls" : "no recent calls") }
            for entry in entries {
                if json { print(WatchEvent.jsonObject(entry)) } else { print(Self.line(entry)) }
            }
        }

        static func line(_ entry: [String: DBusValue]) -> String {
            func text(_ key: String) -> String { entry[key].map { "\($0.unwrappedVariant)".trimmingCharacters(in: ["\""]) } ?? "" }
            var ended = ""
            if case .uint64(let micros)? = entry[Telephony1.Key.endedAt] {
                ended = Date(timeIntervalSince1970: Double(micros) / 1e6).formatted(date: .abbreviated, time: .shortened)
            }
            let name = text(Telephony1.Key.callerName)
            let direction = entry[Telephony1.Key.outgoing] == .bool(true) ? "outgoing" : "incoming"
            return "\(text(Telephony1.Key.id))  \(ended)  \(text(Telephony1.Key.status))  \(direction)  \(text(Telephony1.Key.providerName))  \(text(Telephony1.Key.handle))\(name.isEmpty ? "" : " (\(name))")"
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget every recent call.")
        @OptionGroup var bus: BusOptions
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.Recents.clear)
        }
    }
}

struct CallBack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "callback", abstract: "Call back a recent call (its Id from `monkeycall recents`).")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The recent call's Id.") var id: UInt64

    func run() async throws {
        print(try await ServiceClient(bus).call(Telephony1.Recents.callBack, id))
    }
}

struct Favorites: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The people you call most: they are named on calls and ring through Do Not Disturb.",
                                                    subcommands: [List.self, Add.self, Remove.self, Call.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List favorites.")
        @OptionGroup var bus: BusOptions
        func run() async throws {
            let favorites = try await ServiceClient(bus).call(Telephony1.Favorites.list)
            if favorites.isEmpty { print("no favorites") }
            for item in favorites {
                func text(_ key: String) -> String { item[key].map { "\($0)".trimmingCharacters(in: ["\""]) } ?? "" }
                print("\(text(Telephony1.Key.id))  \(text(Telephony1.Key.name))  \(text(Telephony1.Key.handle))  \(text(Telephony1.Key.providerName))")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a favorite and print its Id.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "Their name.") var name: String
        @Argument(help: "The handle to call.") var handle: String
        @Option(help: "The app to call them through.") var provider: String
        @Option(help: "generic, phone-number or email-address.") var handleType = "generic"
        func run() async throws {
            print(try await ServiceClient(bus).call(Telephony1.Favorites.add, handle, handleType, name, provider))
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
            print(try await ServiceClient(bus).call(Telephony1.Favorites.call, id))
        }
    }
}
