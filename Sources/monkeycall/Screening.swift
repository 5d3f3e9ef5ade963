import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

struct DND: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dnd", abstract: "Do Not Disturb: on, off or status.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "on, off or status.") var state: String = "status"

    func run() async throws {
        let client = try await ServiceClient(bus)
        switch state {
        case "on", "off":
            try await client.service(Telephony1.rootPath, "org.freedesktop.DBus.Properties", "Set",
                                     [.string(Telephony1.Interface.manager), .string("DoNotDisturb"), .variant(.bool(state == "on"))])
        case "status": break
        default: throw ValidationError("say on, off or status")
        }
        let reply = try await client.service(Telephony1.rootPath, "org.freedesktop.DBus.Properties", "GetAll", [.string(Telephony1.Interface.manager)])
        let properties = reply.first?.vardict ?? [:]
        func flag(_ name: String) -> String { properties[name] == .bool(true) ? "on" : "off" }
        let source = if case .string(let source)? = properties["DoNotDisturbSource"] { source } else { "" }
        let state = switch source {
        case "monkeycall": "on, MonkeyCall's own"
        case "gnome": "on, from GNOME's notification settings"
        case "notification-server": "on, from the notification server"
        // An older service without the desktop's sources.
        case "": flag("DoNotDisturb")
        case "none": "off"
        default: "on, from \(source)"
        }
        print("Do Not Disturb: \(state) (favorites ring: \(flag("DoNotDisturbAllowFavorites")), repeated calls ring: \(flag("DoNotDisturbAllowRepeatedCalls")))")
        if source != "monkeycall" && source != "none" && !source.isEmpty {
            print("MonkeyCall's own Do Not Disturb: \(flag("DoNotDisturb"))")
        }
        print("Silence unknown callers: \(flag("SilenceUnknownCallers"))")
    }
}

struct Block: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your block list: handles, or number prefixes such as +44*.",
                                                    subcommands: [List.self, Add.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List blocked handles and prefixes.")
        @OptionGroup var bus: BusOptions
        func run() async throws {
            let reply = try await ServiceClient(bus).service(Telephony1.rootPath, "org.freedesktop.DBus.Properties", "Get",
                                                             [.string(Telephony1.Interface.callDirectory), .string("BlockedHandles")])
            let patterns = (try? [String](dbusValue: reply.first?.unwrappedVariant ?? .array(element: "s", []))) ?? []
            print(patterns.isEmpty ? "nothing is blocked" : patterns.joined(separator: "\n"))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Block a handle or a prefix.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "A handle, or a number prefix ending in *.") var pattern: String
        func run() async throws {
            try await ServiceClient(bus).service(Telephony1.rootPath, Telephony1.Interface.callDirectory, "BlockHandle", [.string(pattern)])
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unblock a handle or a prefix.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "As it was added.") var pattern: String
        func run() async throws {
            try await ServiceClient(bus).service(Telephony1.rootPath, Telephony1.Interface.callDirectory, "UnblockHandle", [.string(pattern)])
        }
    }
}

struct Identify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is this caller: the call directories' label, and whether they are blocked.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "A handle or number.") var handle: String

    func run() async throws {
        let reply = try await ServiceClient(bus).service(Telephony1.rootPath, Telephony1.Interface.callDirectory, "Identify", [.string(handle)])
        guard reply.count == 2, case .string(let label) = reply[0], case .bool(let blocked) = reply[1] else { return }
        print("\(label.isEmpty ? "unknown caller" : label)\(blocked ? ", blocked" : "")")
    }
}
