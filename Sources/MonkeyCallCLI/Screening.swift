import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
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
            // TRANSLATORS: %1$s is allow or disallow (commands: keep them), %2$s the choices.
            throw ValidationError(tr("say whom to %1$s: %2$s", state.rawValue, Exception.allCases.map(\.rawValue).joined(separator: ", ")))
        case (.on, _?), (.off, _?), (.status, _?):
            throw ValidationError(tr("'%1$s' goes with allow or disallow: monkeycall dnd allow %1$s", who!.rawValue))
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
        func flag(_ property: PropertySpec<Bool>) -> String { properties[property] == true ? trc("setting", "on") : trc("setting", "off") }
        let source = properties[Telephony1.Manager.doNotDisturbSource] ?? ""
        let state = switch source {
        case "monkeycall": tr("on, MonkeyCall's own")
        case "gnome": tr("on, from GNOME's notification settings")
        case "notification-server": tr("on, from the notification server")
        // An older service without the desktop's sources.
        case "": flag(Telephony1.Manager.doNotDisturb)
        case "none": trc("setting", "off")
        default: tr("on, from %1$s", Output.clean(source))
        }
        // An older service without contacts says nothing of them.
        var exceptions = [tr("favorites ring: %1$s", flag(Telephony1.Manager.doNotDisturbAllowFavorites))]
        if properties[Telephony1.Manager.doNotDisturbAllowContacts] != nil {
            exceptions.append(tr("contacts ring: %1$s", flag(Telephony1.Manager.doNotDisturbAllowContacts)))
        }
        exceptions.append(tr("repeated calls ring: %1$s", flag(Telephony1.Manager.doNotDisturbAllowRepeatedCalls)))
        // TRANSLATORS: %1$s is the state ("on, MonkeyCall's own"), %2$s who rings through it.
        print(tr("Do Not Disturb: %1$s (%2$s)", state, exceptions.joined(separator: tr(", "))))
        if source != "monkeycall" && source != "none" && !source.isEmpty {
            print(tr("MonkeyCall's own Do Not Disturb: %1$s", flag(Telephony1.Manager.doNotDisturb)))
        }
        print(tr("Silence unknown callers: %1$s", flag(Telephony1.Manager.silenceUnknownCallers)))
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
            format.print(try await ServiceClient(bus).get(Telephony1.CallDirectory.blockedHandles), columns: [trc("column", "BLOCKED")],
                         orWhenEmpty: tr("nothing is blocked"), json: { .string($0) }) { [$0] }
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
                throw CLIError(tr("'%1$s' is not blocked; blocked: %2$s", Output.clean(pattern), before.isEmpty ? tr("nothing") : before.map(Output.clean).joined(separator: tr(", "))))
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
        let who = label.isEmpty ? tr("unknown caller") : Output.clean(label)
        // TRANSLATORS: %1$s is the caller's name, or "unknown caller".
        print(blocked ? tr("%1$s, blocked", who) : who)
    }
}
