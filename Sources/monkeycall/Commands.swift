import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Say whether the service runs, with its providers and calls.")
    @OptionGroup var bus: BusOptions

    func run() async throws {
        let client = try await ServiceClient(bus)
        let version = try await client.get(Telephony1.Manager.version)
        let providers = try await client.providers()
        let calls = try await client.calls()
        print("MonkeyCall \(Output.clean(version)) is running")
        print("providers: \(providers.isEmpty ? "none" : ServiceClient.ProviderInfo.list(providers))")
        print("calls: \(calls.count)")
    }
}

struct Calls: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the live calls.")
    @OptionGroup var bus: BusOptions
    @OptionGroup var format: ListFormat

    func run() async throws {
        format.print(try await ServiceClient(bus).calls(), columns: [Telephony1.Call.uuid.name, "STATE", "DIRECTION", "APP", "HANDLE", "NAME", "MUTED", "ON HOLD"],
                     orWhenEmpty: "no calls", json: { Output.jsonObject($0.properties) }) { call in
            func flag(_ property: PropertySpec<Bool>) -> String { call.properties[property] == true ? "yes" : "no" }
            return [call.uuid, call.state, call.properties[Telephony1.Call.outgoing] == true ? "outgoing" : "incoming",
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
        format.print(try await ServiceClient(bus).providers(), columns: ["PROVIDER", "NAME", "HANDLE TYPES", "VIDEO", "APP"],
                     orWhenEmpty: "no providers", json: { provider in
            ["Path": provider.path.rawValue, Telephony1.Provider.name.name: provider.name, "Label": provider.label,
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
            throw CLIError("\(said); choose one with --provider: \(ServiceClient.ProviderInfo.list(providers))")
        }
    }
}

/// `--handle-type`: the kinds of handle the API knows.
enum HandleType: String, ExpressibleByArgument, CaseIterable {
    case generic, phoneNumber = "phone-number", emailAddress = "email-address"
}

/// The commands that act on one call, optionally named by UUID.
protocol CallCommand: AsyncParsableCommand {
    var bus: BusOptions { get }
    var uuid: String? { get }
    static var purpose: String { get }
    static func fits(_ call: ServiceClient.CallInfo) -> Bool
    func act(on uuid: String, _ client: ServiceClient) async throws
}

extension CallCommand {
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { true }
    func run() async throws {
        let client = try await ServiceClient(bus)
        let uuid = try await client.resolveCall(uuid, purpose: Self.purpose, filter: Self.fits)
        try await act(on: uuid, client)
    }
}

struct Answer: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Answer a ringing call.")
    static let purpose = "answer"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call rings.", completion: .custom(Completion.calls)) var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "ringing" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.answerCall, uuid) }
}

struct Decline: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Decline a ringing call.")
    static let purpose = "decline"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call rings.", completion: .custom(Completion.calls)) var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "ringing" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.endCall, uuid) }
}

struct End: CallCommand {
    static let configuration = CommandConfiguration(abstract: "End (or decline) a call.")
    static let purpose = "end"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.", completion: .custom(Completion.calls)) var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.endCall, uuid) }
}

struct Hold: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Put a call on hold.")
    static let purpose = "hold"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call is active.", completion: .custom(Completion.calls)) var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "active" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setHeld, uuid, true) }
}

struct Resume: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Take a call off hold.")
    static let purpose = "resume"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call is held.", completion: .custom(Completion.calls)) var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "held" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setHeld, uuid, false) }
}

struct Mute: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Mute a call's microphone.")
    static let purpose = "mute"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.", completion: .custom(Completion.calls)) var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setMuted, uuid, true) }
}

struct Unmute: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Unmute a call's microphone.")
    static let purpose = "unmute"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.", completion: .custom(Completion.calls)) var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setMuted, uuid, false) }
}

struct DTMF: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dtmf", abstract: "Play DTMF tones on a call.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call.", completion: .custom(Completion.calls)) var uuid: String
    @Argument(help: "Digits: 0-9 * # A-D, and , or ; for pauses.") var digits: String

    func run() async throws {
        try await ServiceClient(bus).call(Telephony1.CallController.playDTMF, uuid, digits, "single-tone")
    }
}
