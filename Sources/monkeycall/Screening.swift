import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

struct DND: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dnd", abstract: "Do Not Disturb: on, off or status; allow or disallow calls from contacts or favorites while it is on.",
        discussion: "monkeycall dnd allow contacts: contacts in your address book ring during Do Not Disturb (iOS's \"Allow calls from: All Contacts\"); "
            + "favorites ring unless you disallow them.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "on, off, status, allow or disallow.") var state: Switch = .status
    @Argument(help: "With allow or disallow: contacts, favorites or repeated-calls (a second call within 3 minutes).") var who: Exception?

    enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off, status, allow, disallow }

    /// Who rings during Do Not Disturb.
    enum Exception: String, ExpressibleByArgument, CaseIterable {
        case contacts, favorites
        case repeatedCalls = "repeated-calls"

        var property: PropertySpec<Bool> {
            switch self {
            case .contacts: Telephony1.Manager.doNotDisturbAllowContacts
            case .favorites: Telephony1.Manager.doNotDisturbAllowFavorites
            case .repeatedCalls: Telephony1.Manager.doNotDisturbAllowRepeatedCalls
            }
        }
    }

    func validate() throws {
        switch (state, who) {
        case (.allow, nil), (.disallow, nil):
            throw ValidationError("say whom to \(state.rawValue): \(Exception.allCases.map(\.rawValue).joined(separator: ", "))")
        case (.on, _?), (.off, _?), (.status, _?):
            throw ValidationError("'\(who!.rawValue)' goes with allow or disallow: monkeycall dnd allow \(who!.rawValue)")
        default:
            break
        }
    }

    func run() async throws {
        let client = try await ServiceClient(bus)
        switch state {
        case .on, .off: try await client.set(Telephony1.Manager.doNotDisturb, state == .on)
        case .allow, .disallow: try await client.set(who!.property, state == .allow)
        case .status: break
        }
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
        // An older service without contacts says nothing of them.
        let contacts = properties[Telephony1.Manager.doNotDisturbAllowContacts] == nil ? "" : "contacts ring: \(flag(Telephony1.Manager.doNotDisturbAllowContacts)), "
        print("Do Not Disturb: \(state) (favorites ring: \(flag(Telephony1.Manager.doNotDisturbAllowFavorites)), \(contacts)"
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
    static let configuration = CommandConfiguration(abstract: "Who is this caller: your favorite's or contact's name, else the call directories' label; and whether they are blocked.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "A handle or number.") var handle: String

    func run() async throws {
        let (label, blocked) = try await ServiceClient(bus).call(Telephony1.CallDirectory.identify, handle)
        print("\(label.isEmpty ? "unknown caller" : Output.clean(label))\(blocked ? ", blocked" : "")")
    }
}
