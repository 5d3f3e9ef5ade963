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
        print("MonkeyCall \(version) is running")
        print("providers: \(providers.isEmpty ? "none" : providers.map(\.name).joined(separator: ", "))")
        print("calls: \(calls.count)")
    }
}

struct Calls: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the live calls.")
    @OptionGroup var bus: BusOptions

    func run() async throws {
        let calls = try await ServiceClient(bus).calls()
        if calls.isEmpty { print("no calls") }
        for call in calls {
            let direction = call.properties[Telephony1.Call.outgoing] == true ? "outgoing" : "incoming"
            let name = call.string(Telephony1.Call.callerName)
            let provider = call.string(Telephony1.Call.providerName), handle = call.string(Telephony1.Call.handle)
            print("\(call.uuid)  \(call.state)  \(direction)  \(provider)  \(handle)\(name.isEmpty ? "" : " (\(name))")")
        }
    }
}

struct Dial: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start an outgoing call and print its UUID.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "Who to call: a name, number or address.") var handle: String
    @Option(help: "The provider (app) to call through, by name.") var provider: String?
    @Option(help: "generic, phone-number or email-address.") var handleType: String = "generic"
    @Flag(help: "A video call.") var video = false

    func run() async throws {
        let client = try await ServiceClient(bus)
        var options: [String: DBusValue] = [Telephony1.Key.handleType: .string(handleType), Telephony1.Key.video: .bool(video)]
        if let provider {
            let providers = try await client.providers()
            guard let match = providers.first(where: { $0.name == provider }) else {
                throw CLIError("no provider named '\(provider)'; registered: " + (providers.isEmpty ? "none" : providers.map(\.name).joined(separator: ", ")))
            }
            options[Telephony1.Key.provider] = .objectPath(match.path)
        }
        let (uuid, _) = try await client.call(Telephony1.CallController.startCall, handle, options)
        print(uuid)
    }
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
    @Argument(help: "The call; may be left out when one call rings.") var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "ringing" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.answerCall, uuid) }
}

struct Decline: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Decline a ringing call.")
    static let purpose = "decline"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call rings.") var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "ringing" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.endCall, uuid) }
}

struct End: CallCommand {
    static let configuration = CommandConfiguration(abstract: "End (or decline) a call.")
    static let purpose = "end"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.") var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.endCall, uuid) }
}

struct Hold: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Put a call on hold.")
    static let purpose = "hold"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call is active.") var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "active" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setHeld, uuid, true) }
}

struct Resume: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Take a call off hold.")
    static let purpose = "resume"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when one call is held.") var uuid: String?
    static func fits(_ call: ServiceClient.CallInfo) -> Bool { call.state == "held" }
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setHeld, uuid, false) }
}

struct Mute: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Mute a call's microphone.")
    static let purpose = "mute"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.") var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setMuted, uuid, true) }
}

struct Unmute: CallCommand {
    static let configuration = CommandConfiguration(abstract: "Unmute a call's microphone.")
    static let purpose = "unmute"
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call; may be left out when there is one.") var uuid: String?
    func act(on uuid: String, _ client: ServiceClient) async throws { try await client.call(Telephony1.CallController.setMuted, uuid, false) }
}

struct DTMF: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dtmf", abstract: "Play DTMF tones on a call.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The call.") var uuid: String
    @Argument(help: "Digits: 0-9 * # A-D, and , or ; for pauses.") var digits: String

    func run() async throws {
        try await ServiceClient(bus).call(Telephony1.CallController.playDTMF, uuid, digits, "single-tone")
    }
}
