import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import ScreenText

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Say whether the service runs, with its providers and calls.")
    @OptionGroup var bus: BusOptions

    func run() async throws {
        let client = try await ServiceClient(bus)
        let version = try await client.get(Telephony1.Manager.version)
        let providers = try await client.providers()
        let calls = try await client.calls()
        print(tr("MonkeyCall %1$s is running", Output.clean(version)))
        print(tr("providers: %1$s", providers.isEmpty ? tr("none") : ServiceClient.ProviderInfo.list(providers)))
        print(tr("calls: %1$s", String(calls.count)))
    }
}

struct Calls: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the live calls.")
    @OptionGroup var bus: BusOptions
    @OptionGroup var format: ListFormat

    func run() async throws {
        format.print(try await ServiceClient(bus).calls(), columns: [Telephony1.Call.uuid.name, trc("column", "STATE"), trc("column", "DIRECTION"), trc("column", "APP"), trc("column", "HANDLE"),
                                                                        trc("column", "NAME"), trc("column", "MUTED"), trc("column", "ON HOLD")],
                     orWhenEmpty: tr("no calls"), json: { Output.jsonObject($0.properties) }) { call in
            func flag(_ property: PropertySpec<Bool>) -> String { call.properties[property] == true ? "yes" : "no" }
            return [call.uuid, call.state?.rawValue ?? "", call.properties[Telephony1.Call.outgoing] == true ? "outgoing" : "incoming",
                    call.string(Telephony1.Call.providerName), call.string(Telephony1.Call.handle), call.name,
                    flag(Telephony1.Call.muted), flag(Telephony1.Call.onHold)]
        }
    }
}

struct Providers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the apps that place and receive calls (providers).")
    @OptionGroup var bus: BusOptions
    @OptionGroup var format: ListFormat

    func run() async throws {
        format.print(try await ServiceClient(bus).providers(), columns: [trc("column", "PROVIDER"), trc("column", "NAME"), trc("column", "HANDLE TYPES"),
                                                                            trc("column", "VIDEO"), trc("column", "APP")],
                     orWhenEmpty: tr("no providers"), json: { provider in
            ["Path": .string(provider.path.rawValue), Telephony1.Provider.name.name: .string(provider.name), "Label": .string(provider.label),
             Telephony1.Provider.configuration.name: Output.jsonObject(provider.configuration)]
        }) { provider in
            func text(_ key: String) -> String { provider.configuration[key].map(Output.plainText) ?? "" }
            return [provider.label, provider.name, text(Telephony1.Key.supportedHandleTypes),
                    provider.configuration[Telephony1.Key.supportsVideo]?.unwrappedVariant == .bool(true) ? "yes" : "no",
                    text(Telephony1.Key.desktopEntry)]
        }
    }
}

struct Dial: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start an outgoing call and print its UUID.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "Who to call: a name, number or address.") var handle: String
    @Option(help: "The provider (app) to call through: its name, or its label in `monkeycall providers`.",
            completion: .custom(Completion.providers)) var provider: String?
    @Option(help: "generic, phone-number or email-address.") var handleType: HandleType = .generic
    @Flag(help: "A video call.") var video = false

    func run() async throws {
        // Refused before it is sent (the service refuses it too): a number pasted with an ESC or a
        // bidi override in it is not what it reads as.
        if let hazard = ScreenText.handleHazard(in: handle) {
            // TRANSLATORS: %1$s is a character's code point, as U+001B.
            throw CLIError(tr("the handle contains %1$s, a control or bidirectional formatting character; a handle to call may hold none",
                              ScreenText.codePoint(hazard)))
        }
        let client = try await ServiceClient(bus)
        var options: [String: DBusValue] = [Telephony1.Key.handleType: .string(handleType.rawValue), Telephony1.Key.video: .bool(video)]
        if let provider {
            options[Telephony1.Key.provider] = .objectPath(try await client.resolveProvider(provider).path)
        }
        do {
            let (uuid, _) = try await client.call(Telephony1.CallController.startCall, handle, options)
            print(Output.clean(uuid))
        } catch let error as CLIError where provider == nil && error.name == APIError.unknownCallProvider.rawValue {
            // The service will not guess between apps ("2 providers can place …", not "No provider can …"):
            // name them, and the option that chooses.
            let providers = try await client.providers()
            guard providers.count > 1, error.message.first?.isNumber == true else { throw error }
            let said = error.message.components(separatedBy: " (").first ?? error.message
            // TRANSLATORS: %1$s is the service's (English) reason, %2$s the providers to choose from.
            throw CLIError(tr("%1$s; choose one with --provider: %2$s", said, ServiceClient.ProviderInfo.list(providers)))
        }
    }
}

/// `--handle-type`: the kinds of handle the API knows, by their wire names.
extension HandleType: ExpressibleByArgument {}

/// What the commands that act on one call do: `monkeycall answer`, `decline`, `end`, `hold`,
/// `resume`, `mute` and `unmute`.
enum CallAction: String {
    case answer, decline, end, hold, resume, mute, unmute

    var abstract: String {
        switch self {
        case .answer: "Answer a ringing call."
        case .decline: "Decline a ringing call."
        case .end: "End (or decline) a call."
        case .hold: "Put a call on hold."
        case .resume: "Take a call off hold."
        case .mute: "Mute a call's microphone."
        case .unmute: "Unmute a call's microphone."
        }
    }

    /// The state of the calls the action is for (nil: any call): with the UUID left out, it acts on
    /// the one call in that state.
    var state: CallState? {
        switch self {
        case .answer, .decline: .ringing
        case .hold: .active
        case .resume: .held
        case .end, .mute, .unmute: nil
        }
    }

    /// The help of the `<uuid>` argument: when it may be left out.
    var uuidHelp: String {
        let when = switch state {
        case .ringing?: "one call rings"
        case let state?: "one call is \(state.rawValue)"
        case nil: "there is one"
        }
        return "The call; may be left out when \(when)."
    }

    func perform(on uuid: String, _ client: ServiceClient) async throws {
        switch self {
        case .answer: try await client.call(Telephony1.CallController.answerCall, uuid)
        case .decline, .end: try await client.call(Telephony1.CallController.endCall, uuid)
        case .hold, .resume: try await client.call(Telephony1.CallController.setHeld, uuid, self == .hold)
        case .mute, .unmute: try await client.call(Telephony1.CallController.setMuted, uuid, self == .mute)
        }
    }
}

/// A command that acts on one call, optionally named by UUID: one type a `CallAction`, as
/// ArgumentParser has a type a subcommand.
struct CallCommand<Action: CallActionType>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Action.action.rawValue, abstract: Action.action.abstract)
    }

    @OptionGroup var bus: BusOptions
    @Argument(help: ArgumentHelp(Action.action.uuidHelp), completion: .custom(Completion.calls)) var uuid: String?

    func run() async throws {
        let client = try await ServiceClient(bus)
        let state = Action.action.state
        let uuid = try await client.resolveCall(uuid, purpose: Action.action.rawValue) { state == nil || $0.state == state }
        try await Action.action.perform(on: uuid, client)
    }
}

/// The types that name the actions, one a subcommand: `CallCommand<Answer>` is `monkeycall answer`.
protocol CallActionType { static var action: CallAction { get } }
enum Answer: CallActionType { static let action = CallAction.answer }
enum Decline: CallActionType { static let action = CallAction.decline }
enum End: CallActionType { static let action = CallAction.end }
enum Hold: CallActionType { static let action = CallAction.hold }
enum Resume: CallActionType { static let action = CallAction.resume }
enum Mute: CallActionType { static let action = CallAction.mute }
enum Unmute: CallActionType { static let action = CallAction.unmute }

/// `monkeycall show [UUID]`: the call in the Phone app's call window, the app started by D-Bus
/// activation, as a click on the notification of a call whose app has no window does.
struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a call in the Phone app's call window.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.", completion: .custom(Completion.calls)) var uuid: String?

    func run() async throws {
        let client = try await ServiceClient(bus)
        let calls = try await client.calls()
        let uuid = try self.uuid?.lowercased() ?? ServiceClient.onlyCall(of: calls, purpose: "show")
        guard calls.contains(where: { $0.uuid == uuid }) else { throw CLIError(tr("there is no call %1$s", Output.clean(uuid))) }
        do {
            try await client.connection.call(Desktop.Application.activateAction, destination: PhoneApp.appID, path: PhoneApp.objectPath,
                                             PhoneApp.Action.showCall, [.string(uuid)], [:])
        } catch let error as DBusError where error.name == DBusError.Name.serviceUnknown {
            throw CLIError(tr("the Phone app (%1$s) is not installed", PhoneApp.appID))
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }
}

struct DTMF: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dtmf", abstract: "Play DTMF tones on a call.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call.", completion: .custom(Completion.calls)) var uuid: String
    @Argument(help: "Digits: 0-9 * # A-D, and , or ; for pauses.") var digits: String

    func run() async throws {
        try await ServiceClient(bus).call(Telephony1.CallController.playDTMF, uuid, digits, DTMFType.singleTone.rawValue)
    }
}
