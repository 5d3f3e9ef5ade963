import Foundation
import MonkeyCallKit

/// One call of the MonkeyCall app, with a simulated network behind it (the
/// seed sample's `ActiveCall`). Lives on the app's queue.
final class ActiveCall: @unchecked Sendable {
    let uuid: UUID
    let isOutgoing: Bool
    let handle: String
    private let queue: DispatchQueue
    private let network: SimulatedNetwork

    private(set) var startedConnectingOn: Date?
    private(set) var connectedOn: Date?
    private(set) var endedOn: Date?
    var isOnHold = false
    var isMuted = false

    /// Called when the call starts connecting and when it connected.
    var startingConnectionChanged: ((ActiveCall) -> Void)?
    var connectedChanged: ((ActiveCall) -> Void)?

    private(set) var isConnecting = false {
        didSet {
            if isConnecting { startedConnectingOn = Date() }
            startingConnectionChanged?(self)
        }
    }

    private(set) var isConnected = false {
        didSet {
            if isConnected { connectedOn = Date() } else { endedOn = Date() }
            connectedChanged?(self)
        }
    }

    init(uuid: UUID, handle: String, outgoing: Bool, queue: DispatchQueue, network: SimulatedNetwork) {
        self.uuid = uuid
        self.handle = handle
        self.isOutgoing = outgoing
        self.queue = queue
        self.network = network
    }

    /// Starts the call; the network starts connecting after a while and connects a little later.
    func startCall(_ completion: (Bool) -> Void) {
        completion(true)
        queue.asyncAfter(deadline: .now() + network.connectAfter) { [weak self] in
            guard let self, self.endedOn == nil else { return }
            self.isConnecting = true
            self.queue.asyncAfter(deadline: .now() + self.network.connectedAfter) { [weak self] in
                guard let self, self.endedOn == nil else { return }
                self.isConnecting = false
                self.isConnected = true
            }
        }
    }

    func answerCall(_ completion: (Bool) -> Void) {
        isConnected = true
        completion(true)
    }

    func endCall(_ completion: (Bool) -> Void) {
        isConnected = false
        completion(true)
    }
}

/// How long the pretend network takes: the sample's 3 s to start connecting, 1.5 s to connect.
struct SimulatedNetwork: Sendable {
    var connectAfter: Double = 3
    var connectedAfter: Double = 1.5
}
