import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

struct DND: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dnd", abstract: "Do Not Disturb: on, off or status.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "on, off or status.") var state: Switch = .status

    enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off, status }

    func run() async throws {
        let client = try await ServiceClient(bus)
        if state != .status { try await client.set(Telephony1.Manager.doNotDisturb, state == .on) }
        let properties = try await client.allProperties(of: Telephony1.Manager.interface)
        func flag(_ property: PropertySpec<Bool>) -> String { properties[property] == true ? "on" : "off" }
        let source = properties[Telephony1.Manager.doNotDisturbSource] ?? ""
        let state = switch source {
        case "monkeycall": "on, MonkeyCall's own"
        case "gnome": "on, from GNOME's notification settings"
        case "notification-server": "on, from the notification server"
        // An older service without the desktop's sources.
        case "": flag(Telephony1.Manager.doNotDisturb)
        case "none": "off"
        default: "on, from \(Output.clean(source))"
        }
        print("Do Not Disturb: \(state) (favorites ring: \(flag(Telephony1.Manager.doNotDisturbAllowFavorites)), "
              + "repeated calls ring: \(flag(Telephony1.Manager.doNotDisturbAllowRepeatedCalls)))")
        if source != "monkeycall" && source != "none" && !source.isEmpty {
            print("MonkeyCall's own Do Not Disturb: \(flag(Telephony1.Manager.doNotDisturb))")
        }
        print("Silence unknown callers: \(flag(Telephony1.Manager.silenceUnknownCallers))")
    }
}

struct Block: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your block list: handles, or number prefixes such as +44*.",
                                                    subcommands: [List.self, Add.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List blocked handles and prefixes.")
        @OptionGroup var bus: BusOptions
        @OptionGroup var format: ListFormat
        func run() async throws {
            format.print(try await ServiceClient(bus).get(Telephony1.CallDirectory.blockedHandles), columns: ["BLOCKED"],
                         orWhenEmpty: "nothing is blocked", json: { $0 }) { [$0] }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Block a handle or a prefix.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "A handle, or a number prefix ending in *.") var pattern: String
        func run() async throws {
            try await ServiceClient(bus).call(Telephony1.CallDirectory.blockHandle, pattern)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unblock a handle or a prefix.")
        @OptionGroup var bus: BusOptions
        @Argument(help: "As it was added, or the same number written otherwise.") var pattern: String
        func run() async throws {
            let client = try await ServiceClient(bus)
            let before = try await client.get(Telephony1.CallDirectory.blockedHandles)
            try await client.call(Telephony1.CallDirectory.unblockHandle, pattern)
            // The service removes what equals the pattern and is quiet when nothing does.
            guard try await client.get(Telephony1.CallDirectory.blockedHandles).count < before.count else {
                throw CLIError("'\(Output.clean(pattern))' is not blocked; blocked: \(before.isEmpty ? "nothing" : before.map(Output.clean).joined(separator: ", "))")
            }
        }
    }
}

struct Identify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is this caller: the call directories' label, and whether they are blocked.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "A handle or number.") var handle: String

    func run() async throws {
        let (label, blocked) = try await ServiceClient(bus).call(Telephony1.CallDirectory.identify, handle)
        print("\(label.isEmpty ? "unknown caller" : Output.clean(label))\(blocked ? ", blocked" : "")")
    }
}
