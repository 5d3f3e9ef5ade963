import Foundation
import MonkeyCallKit
import Synchronization

/// One call of the MonkeyCall app, with a simulated network behind it (the
/// seed sample's `ActiveCall`). Lives on the app's queue; its changing state is
/// behind a `Mutex`, so that the compiler can check it is shared safely.
final class ActiveCall: Sendable {
    let uuid: UUID
    let isOutgoing: Bool
    let handle: String
    private let queue: DispatchQueue
    private let network: SimulatedNetwork

    private struct State {
        var startedConnectingOn: Date?
        var connectedOn: Date?
        var endedOn: Date?
        var isOnHold = false
        var isMuted = false
        var isConnecting = false
        var isConnected = false
        var startingConnectionChanged: (@Sendable (ActiveCall) -> Void)?
        var connectedChanged: (@Sendable (ActiveCall) -> Void)?
    }

    private let state = Mutex(State())

    var startedConnectingOn: Date? { state.withLock { $0.startedConnectingOn } }
    var connectedOn: Date? { state.withLock { $0.connectedOn } }
    var endedOn: Date? { state.withLock { $0.endedOn } }
    var isOnHold: Bool {
        get { state.withLock { $0.isOnHold } }
        set { state.withLock { $0.isOnHold = newValue } }
    }
    var isMuted: Bool {
        get { state.withLock { $0.isMuted } }
        set { state.withLock { $0.isMuted = newValue } }
    }

    /// Called when the call starts connecting and when it connected.
    var startingConnectionChanged: (@Sendable (ActiveCall) -> Void)? {
        get { state.withLock { $0.startingConnectionChanged } }
        set { state.withLock { $0.startingConnectionChanged = newValue } }
    }
    var connectedChanged: (@Sendable (ActiveCall) -> Void)? {
        get { state.withLock { $0.connectedChanged } }
        set { state.withLock { $0.connectedChanged = newValue } }
    }

    var isConnecting: Bool { state.withLock { $0.isConnecting } }
    var isConnected: Bool { state.withLock { $0.isConnected } }

    init(uuid: UUID, handle: String, outgoing: Bool, queue: DispatchQueue, network: SimulatedNetwork) {
        self.uuid = uuid
        self.handle = handle
        self.isOutgoing = outgoing
        self.queue = queue
        self.network = network
    }

    /// Sets `isConnecting` (and when it started), then tells `startingConnectionChanged`, outside the lock.
    private func setConnecting(_ connecting: Bool) {
        let changed = state.withLock {
            $0.isConnecting = connecting
            if connecting { $0.startedConnectingOn = Date() }
            return $0.startingConnectionChanged
        }
        changed?(self)
    }

    /// Sets `isConnected` (and when it connected or ended), then tells `connectedChanged`, outside the lock.
    private func setConnected(_ connected: Bool) {
        let changed = state.withLock {
            $0.isConnected = connected
            if connected { $0.connectedOn = Date() } else { $0.endedOn = Date() }
            return $0.connectedChanged
        }
        changed?(self)
    }

    /// Starts the call; the network starts connecting after a while and connects a little later.
    func startCall(_ completion: (Bool) -> Void) {
        completion(true)
        queue.asyncAfter(deadline: .now() + network.connectAfter) { [weak self] in
            guard let self, self.endedOn == nil else { return }
            self.setConnecting(true)
            self.queue.asyncAfter(deadline: .now() + self.network.connectedAfter) { [weak self] in
                guard let self, self.endedOn == nil else { return }
                self.setConnecting(false)
                self.setConnected(true)
            }
        }
    }

    func answerCall(_ completion: (Bool) -> Void) {
        setConnected(true)
        completion(true)
    }

    func endCall(_ completion: (Bool) -> Void) {
        setConnected(false)
        completion(true)
    }
}

/// How long the pretend network takes: the sample's 3 s to start connecting, 1.5 s to connect.
struct SimulatedNetwork: Sendable {
    var connectAfter: Double = 3
    var connectedAfter: Double = 1.5
}
