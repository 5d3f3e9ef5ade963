import Dispatch
import FoundationEssentials
import MonkeyCallKit
import QueueExecutor

/// baresip as a MonkeyCall provider: its `ctrl_tcp` events become the provider's
/// reports, and MonkeyCall's actions become `ctrl_tcp` commands. An action is
/// fulfilled only when baresip confirms it (the event, or the command's reply
/// where baresip has no event) and failed otherwise, so that MonkeyCall's
/// timeouts and errors say what happened.
///
/// Everything runs on `queue`, the actor's executor: the control client's callbacks and the
/// provider's delegate enter the actor there.
public actor Bridge: CXProviderDelegate {
    public nonisolated let queue: DispatchQueue
    private nonisolated let executor: QueueExecutor
    public nonisolated let provider: CXProvider
    private let controller: CXCallController
    private let control: ControlClient
    private let account: SIPAccount?
    private let log: @Sendable (String) -> Void
    /// After the control connection drops: how long baresip has to come back with
    /// its calls before they are ended as failed.
    private let reconnectGrace: Double

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var calls = CallTable()
    /// Calls up in baresip that MonkeyCall does not know (after a restart of the bridge or of
    /// the service), being announced through a start action of our own: UUID → baresip id.
    private var adopting: [UUID: (id: String, established: Bool)] = [:]
    private var replies: [String: (ControlResponse?) -> Void] = [:]
    private var nextToken = 0
    private var isConnected = false
    private var isProviderReady = false
    /// Counts connections, so that a late grace timer knows it is stale.
    private var connectionNumber = 0

    public init(configuration: CXProviderConfiguration, control address: ControlAddress, account: SIPAccount?,
                busAddress: String? = nil, reconnectGrace: Double = 1.5, log: @escaping @Sendable (String) -> Void) {
        queue = DispatchQueue(label: "monkeycall-baresip.bridge")
        executor = QueueExecutor(queue: queue)
        self.account = account
        self.log = log
        self.reconnectGrace = reconnectGrace
        control = ControlClient(address: address, queue: queue)
        controller = CXCallController(queue: queue, busAddress: busAddress)
        provider = CXProvider(configuration: configuration, busAddress: busAddress)
        control.onConnected = { [unowned self] in assumeIsolated { $0.connected() } }
        control.onDisconnected = { [unowned self] why in assumeIsolated { $0.disconnected(why) } }
        control.onMessage = { [unowned self] message in assumeIsolated { $0.handle(message) } }
    }

    /// Starts: the provider registers and the control connection opens.
    public nonisolated func start() {
        provider.setDelegate(self, queue: queue)
        control.start()
    }

    /// Stops talking to baresip and leaves MonkeyCall (the provider's calls end as failed).
    public nonisolated func stop() {
        control.stop()
        provider.invalidate()
    }

    // MARK: The control connection

    private func connected() {
        isConnected = true
        connectionNumber += 1
        log("Connected to baresip at \(control.address).")
        resync()
    }

    private func disconnected(_ why: String) {
        let wasConnected = isConnected
        isConnected = false
        let waiting = replies
        replies = [:]
        waiting.values.forEach { $0(nil) }
        guard wasConnected else {
            log("Waiting for baresip: \(why)")
            return
        }
        log("Lost baresip: \(why)")
        // baresip replays nothing after a reconnect: actions waiting for an event cannot be confirmed.
        for var call in calls.all {
            call.answer?.fail()
            call.end?.fail()
            call.answer = nil
            call.end = nil
            calls[id: call.id] = call
        }
        let number = connectionNumber
        executor.async(on: self, after: reconnectGrace) { bridge in
            guard !bridge.isConnected, bridge.connectionNumber == number else { return }
            bridge.endAll(reason: "baresip did not come back")
        }
    }

    /// Ends every call as failed: baresip went away with them.
    private func endAll(reason: String) {
        let gone = calls.all
        calls.removeAll()
        guard !gone.isEmpty else { return }
        log("Ending \(gone.count) call(s): \(reason).")
        for call in gone {
            provider.reportCall(with: call.uuid, endedAt: Date(), reason: .failed)
        }
    }

    /// Sends `commands` in one write; `reply` gets their responses in order (nil for
    /// each one that did not come, because the connection dropped). Every reply comes, at the
    /// latest when the connection drops, so a reply may hold the bridge.
    private func send(_ commands: [ControlCommand], reply: @escaping ([ControlResponse?]) -> Void = { _ in }) {
        var tagged = commands
        var responses = [ControlResponse?](repeating: nil, count: commands.count)
        var outstanding = commands.count
        for index in tagged.indices {
            nextToken += 1
            let token = "mc\(nextToken)"
            tagged[index].token = token
            replies[token] = { response in
                responses[index] = response
                outstanding -= 1
                if outstanding == 0 { reply(responses) }
            }
        }
        guard isConnected, control.send(tagged) else {
            for command in tagged { replies.removeValue(forKey: command.token!)?(nil) }
            return
        }
    }

    private func handle(_ message: ControlMessage) {
        switch message {
        case .response(let response):
            if let token = response.token { replies.removeValue(forKey: token)?(response) }
        case .event(let event):
            if let callEvent = CallEvent(event) { handle(callEvent) }
        }
    }

    // MARK: Events → reports

    func handle(_ event: CallEvent) {
        switch event {
        case .incoming(let id, let handle, let callerName):
            guard calls[id: id] == nil, isProviderReady else { return }
            reportIncoming(id: id, handle: handle, callerName: callerName)
        case .startedConnecting(let id):
            guard let call = calls[id: id], call.outgoing, !call.established else { return }
            provider.reportOutgoingCall(with: call.uuid, startedConnectingAt: nil)
        case .established(let id):
            guard var call = calls[id: id] else { return }
            call.established = true
            if let answer = call.answer {
                answer.fulfill(withDateConnected: Date())
                call.answer = nil
            }
            calls[id: id] = call
            if call.outgoing { provider.reportOutgoingCall(with: call.uuid, connectedAt: nil) }
            log("Call \(call.uuid.uuidString.lowercased()) is established.")
        case .closed(let id, let reason, let param):
            guard let call = calls.remove(id: id) else { return }
            if let end = call.end {
                end.fulfill(withDateEnded: Date())
            } else {
                call.answer?.fail()
                provider.reportCall(with: call.uuid, endedAt: Date(), reason: reason)
            }
            log("Call \(call.uuid.uuidString.lowercased()) closed: \(param).")
        }
    }

    private func reportIncoming(id: String, handle: String, callerName: String?) {
        let call = BridgedCall(id: id, uuid: UUID(), outgoing: false)
        calls[id: id] = call
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: handle)
        if let callerName { update.localizedCallerName = callerName }
        update.supportsHolding = true
        update.supportsDTMF = true
        update.supportsGrouping = false
        update.hasVideo = false
        log("Incoming call \(call.uuid.uuidString.lowercased()) from \(handle).")
        // The completion runs on the delegate's queue, which is the actor's.
        provider.reportNewIncomingCall(with: call.uuid, update: update) { [weak self] error in
            guard let error else { return }
            self?.assumeIsolated { bridge in
                // Refused (block list, Do Not Disturb): the caller hears 486 from baresip.
                bridge.log("MonkeyCall refused the call from \(handle): \(error). Rejecting it.")
                guard bridge.calls[id: id]?.uuid == call.uuid else { return }
                bridge.calls.remove(id: id)
                bridge.send([.callfind(id), .hangup])
            }
        }
    }

    // MARK: Resynchronisation

    /// Brings the table in line with baresip's calls: calls baresip no longer has
    /// end as failed; calls MonkeyCall does not know are reported (again).
    private func resync() {
        guard isConnected, isProviderReady else { return }
        let known = calls.ids
        send([.listcalls]) { [self] responses in
            guard let listing = responses[0] else { return }
            let lines = CommandOutput.lines(fromListcalls: listing.data)
            let commands = lines.flatMap { [ControlCommand.line($0.number), .callstat] }
            guard !commands.isEmpty else { return reconcile(known: known, found: []) }
            send(commands) { [self] responses in
                var found: [FoundCall] = []
                for (index, line) in lines.enumerated() {
                    guard let stat = responses[2 * index + 1], let id = CommandOutput.callID(fromCallstat: stat.data) else { continue }
                    let peer = CommandOutput.peer(fromCallstat: stat.data)
                    found.append(FoundCall(id: id, line: line, incoming: CommandOutput.isIncoming(callstat: stat.data),
                                           peer: peer?.uri ?? line.peer, peerName: peer?.displayName))
                }
                reconcile(known: known, found: found)
            }
        }
    }

    private struct FoundCall {
        let id: String
        let line: CommandOutput.Line
        let incoming: Bool
        let peer: String
        let peerName: String?
    }

    private func reconcile(known: Set<String>, found: [FoundCall]) {
        let present = Set(found.map(\.id))
        for id in known.subtracting(present) {
            guard let call = calls.remove(id: id) else { continue }
            call.answer?.fail()
            if let end = call.end {
                end.fulfill()
            } else {
                provider.reportCall(with: call.uuid, endedAt: Date(), reason: .failed)
            }
            log("Call \(call.uuid.uuidString.lowercased()) is gone from baresip.")
        }
        let adoptingIDs = Set(adopting.values.map(\.id))
        for call in found where calls[id: call.id] == nil && !adoptingIDs.contains(call.id) {
            if call.incoming && call.line.state == "INCOMING" {
                reportIncoming(id: call.id, handle: call.peer, callerName: call.peerName)
            } else {
                adopt(call)
            }
        }
    }

    /// A call that is up in baresip but unknown to MonkeyCall: CallKit has no report for a call
    /// that is already up, so the bridge starts it through the call controller and confirms
    /// the start at once (the call then shows as outgoing).
    private func adopt(_ found: FoundCall) {
        let uuid = UUID()
        let established = found.line.state == "ESTABLISHED"
        adopting[uuid] = (found.id, established)
        log("Reporting call \(uuid.uuidString.lowercased()) with \(found.peer), already up in baresip.")
        let start = CXStartCallAction(call: uuid, handle: CXHandle(type: .generic, value: found.peer))
        // The completion runs on the controller's queue, which is the actor's.
        controller.requestTransaction(with: start) { [weak self] error in
            guard let error else { return }
            self?.assumeIsolated { bridge in
                bridge.adopting[uuid] = nil
                bridge.log("MonkeyCall refused the call with \(found.peer) that baresip has: \(error)")
            }
        }
    }

    // MARK: CXProviderDelegate (called on the delegate's queue, which is the actor's)

    public nonisolated func providerDidBegin(_ provider: CXProvider) { assumeIsolated { $0.began() } }
    public nonisolated func providerDidReset(_ provider: CXProvider) { assumeIsolated { $0.reset() } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXStartCallAction) { assumeIsolated { $0.start(action) } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) { assumeIsolated { $0.answer(action) } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXEndCallAction) { assumeIsolated { $0.end(action) } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) { assumeIsolated { $0.hold(action) } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) { assumeIsolated { $0.mute(action) } }
    public nonisolated func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction) { assumeIsolated { $0.playTones(action) } }

    public nonisolated func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {
        log("MonkeyCall gave up waiting for \(action).")
    }

    // MARK: Actions

    private func began() {
        isProviderReady = true
        log("monkeycall-baresip is ready.")
        resync()
    }

    private func reset() {
        // MonkeyCall dropped every call; those baresip still has are reported again at the next begin.
        isProviderReady = false
        calls.removeAll()
        adopting = [:]
        log("MonkeyCall was reset.")
    }

    private func start(_ action: CXStartCallAction) {
        if let adopted = adopting.removeValue(forKey: action.callUUID) {
            calls[id: adopted.id] = BridgedCall(id: adopted.id, uuid: action.callUUID, outgoing: true, established: adopted.established)
            action.fulfill()
            if adopted.established {
                provider.reportOutgoingCall(with: action.callUUID, connectedAt: nil)
            } else {
                provider.reportOutgoingCall(with: action.callUUID, startedConnectingAt: nil)
            }
            return
        }
        let uri = SIPAccount.dialURI(for: action.handle.value, domain: account?.domain)
        // dial answers ok even for garbage and gives no id: callstat, in the same write, shows the call it made.
        send([.dial(uri), .callstat]) { [self] responses in
            guard let dial = responses[0], dial.ok, let stat = responses[1], stat.ok,
                  let id = CommandOutput.callID(fromCallstat: stat.data), !CommandOutput.isIncoming(callstat: stat.data),
                  calls[id: id] == nil else {
                log("baresip did not dial \(uri).")
                return action.fail()
            }
            calls[id: id] = BridgedCall(id: id, uuid: action.callUUID, outgoing: true)
            log("Dialling \(uri): call \(action.callUUID.uuidString.lowercased()).")
            action.fulfill()
        }
    }

    private func answer(_ action: CXAnswerCallAction) {
        guard var call = calls[uuid: action.callUUID], call.isRingingIncoming else { return action.fail() }
        call.answer = action
        calls[id: call.id] = call
        var commands: [ControlCommand] = [.callfind(call.id), .accept]
        // With two calls ringing, baresip's first accept only tries to hold the other one; the second answers.
        if calls.hasOtherRingingIncoming(than: call.id) { commands += [.callfind(call.id), .accept] }
        send(commands) { responses in
            let sent = Self.selected(responses[0]) && responses.allSatisfy { $0?.ok == true }
            if !sent { self.failPending(\.answer, of: call.id) }
        }
    }

    private func end(_ action: CXEndCallAction) {
        guard var call = calls[uuid: action.callUUID] else { return action.fail() }
        call.end = action
        calls[id: call.id] = call
        // A ringing call: baresip rejects it with 486.
        send([.callfind(call.id), .hangup]) { responses in
            let sent = Self.selected(responses[0]) && responses.allSatisfy { $0 != nil }
            if !sent { self.failPending(\.end, of: call.id) }
        }
    }

    private func hold(_ action: CXSetHeldCallAction) {
        guard let call = calls[uuid: action.callUUID], call.established else { return action.fail() }
        // baresip has no hold event: its reply confirms.
        send([.callfind(call.id), action.isOnHold ? .hold : .resume]) { responses in
            if Self.selected(responses[0]), responses[1]?.ok == true { action.fulfill() } else { action.fail() }
        }
    }

    private func mute(_ action: CXSetMutedCallAction) {
        guard let call = calls[uuid: action.callUUID] else { return action.fail() }
        guard call.muted != action.isMuted else { return action.fulfill() }
        send([.callfind(call.id), .mute]) { [self] responses in
            guard Self.selected(responses[0]), let reply = responses[1], reply.ok, var now = calls[id: call.id] else {
                return action.fail()
            }
            now.muted = CommandOutput.isMuted(fromMuteReply: reply.data) ?? !now.muted
            calls[id: call.id] = now
            if now.muted == action.isMuted { action.fulfill() } else { action.fail() }
        }
    }

    private func playTones(_ action: CXPlayDTMFCallAction) {
        let digits = action.digits.uppercased().filter { "0123456789*#ABCD".contains($0) }
        guard let call = calls[uuid: action.callUUID], call.established, !digits.isEmpty else { return action.fail() }
        send([.callfind(call.id), .sndcode(digits)]) { responses in
            if Self.selected(responses[0]), responses[1]?.ok == true { action.fulfill() } else { action.fail() }
        }
    }

    /// Whether a `callfind` found its call (it answers ok with "call not found" when it did not).
    nonisolated static func selected(_ response: ControlResponse?) -> Bool {
        guard let response, response.ok else { return false }
        return !response.data.contains("not found")
    }

    /// Fails the answer or end action waiting on a call, if it still waits.
    private func failPending<Action: CXAction>(_ action: WritableKeyPath<BridgedCall, Action?>, of id: String) {
        guard var call = calls[id: id], let pending = call[keyPath: action] else { return }
        call[keyPath: action] = nil
        calls[id: id] = call
        pending.fail()
    }
}
