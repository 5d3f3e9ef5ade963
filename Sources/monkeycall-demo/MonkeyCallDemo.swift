import ArgumentParser
import Foundation
import MonkeyCallKit

/// The seed's MonkeyCall sample on the Linux desktop: a pretend VOIP app on MonkeyCallKit.
@main
struct MonkeyCallDemo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall-demo",
        abstract: "The MonkeyCall sample app: a pretend VOIP app that places and takes calls through the MonkeyCall service.")

    @Option(help: "Bus address (default: the session bus, DBUS_SESSION_BUS_ADDRESS).")
    var address: String?

    @Option(help: "Seconds before an outgoing call starts connecting.")
    var connectAfter: Double = 3

    @Option(help: "Seconds from connecting to connected.")
    var connectedAfter: Double = 1.5

    @Option(help: "Pretend that HANDLE calls us.")
    var simulateIncoming: String?

    @Option(help: "Seconds to wait before the simulated incoming call.")
    var after: Double = 0

    @Option(help: "Place a call from a monkeycall: link, e.g. monkeycall://alice.")
    var openURL: String?

    /// Synchronous, with the main thread parked in `dispatchMain()`: the app's work runs on its
    /// queue and MonkeyCallKit's tasks on the kit's own executor, so the idle app wakes no one.
    func run() throws {
        let queue = DispatchQueue(label: "MonkeyCall.app")
        let network = SimulatedNetwork(connectAfter: connectAfter, connectedAfter: connectedAfter)
        let callManager = ActiveCallManager(queue: queue, busAddress: address)
        let providerDelegate = ProviderDelegate(callManager: callManager, queue: queue, network: network, busAddress: address)
        Log.say("MonkeyCall is starting.")

        if let handle = simulateIncoming {
            queue.asyncAfter(deadline: .now() + after) {
                providerDelegate.reportIncomingCall(uuid: UUID(), handle: handle)
            }
        }
        if let openURL {
            guard let url = URL(string: openURL), let handle = StartCallRequest.callHandle(fromURL: url) else {
                throw ValidationError("'\(openURL)' is not a monkeycall: link")
            }
            queue.async { callManager.startCall(handle) }
        }
        // Runs until stopped.
        withExtendedLifetime((callManager, providerDelegate)) { dispatchMain() }
    }
}
