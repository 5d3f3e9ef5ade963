import Foundation

/// What providers report: things the system did not cause.
extension Switchboard {
    public func reportNewIncomingCall(provider id: ProviderID, uuid: UUID, update: CallUpdate) throws(TelephonyError) -> Call {
        let provider = try requireProvider(id)
        guard liveCalls[uuid] == nil else { throw .callUUIDAlreadyExists(uuid) }
        try validate(update, for: provider)
        let limits = options.limits
        let live = provider.callUUIDs.count
        guard live < limits.maximumCallsPerProvider else {
            throw .limitsExceeded("Provider \(provider.name) (\(id)) already has \(live) calls; the limit is \(limits.maximumCallsPerProvider).")
        }
        let ringing = provider.callUUIDs.count { liveCalls[$0]?.state == .ringing }
        guard ringing < limits.maximumRingingCallsPerProvider else {
            throw .limitsExceeded("Provider \(provider.name) (\(id)) already has \(ringing) ringing calls; the limit is \(limits.maximumRingingCallsPerProvider).")
        }
        var call = Call(
            uuid: uuid, provider: id, providerName: provider.name,
            handle: Handle(type: .generic, value: ""), callerName: "",
            outgoing: false, state: .ringing, hasVideo: false, startedAt: clock.now)
        call.apply(update)
        addCall(call)
        ringTimers[uuid] = clock.schedule(after: options.ringTimeout) { [weak self] in
            self?.ringTimedOut(uuid)
        }
        return call
    }

    public func reportCallUpdated(provider id: ProviderID, uuid: UUID, update: CallUpdate) throws(TelephonyError) {
        let provider = try requireProvider(id)
        _ = try requireCall(uuid, of: id)
        try validate(update, for: provider)
        mutateCall(uuid) { $0.apply(update) }
    }

    /// The call ended without the user's doing (`at` == 0 means now). A pending
    /// `end` on it counts as fulfilled; its other pending actions fail.
    public func reportCallEnded(provider id: ProviderID, uuid: UUID, reason: EndReason, at: UInt64) throws(TelephonyError) {
        _ = try requireCall(uuid, of: id)
        endCall(uuid, reason: reason, at: at)
        resumeStrandedCalls()
    }

    public func reportOutgoingCallStartedConnecting(provider id: ProviderID, uuid: UUID, at: UInt64) throws(TelephonyError) {
        let call = try requireCall(uuid, of: id)
        guard call.outgoing else {
            throw .invalidAction("Call \(uuid.lowercased) is incoming; only an outgoing call starts connecting.")
        }
        switch call.state {
        case .dialing:
            mutateCall(uuid) {
                $0.state = .connecting
                $0.connectingAt = at == 0 ? clock.now : at
            }
        case .connecting:
            break // Reported twice: nothing new.
        default:
            throw .invalidAction("Call \(uuid.lowercased) is \(call.state.rawValue); it can only start connecting while dialing.")
        }
    }

    public func reportOutgoingCallConnected(provider id: ProviderID, uuid: UUID, at: UInt64) throws(TelephonyError) {
        let call = try requireCall(uuid, of: id)
        guard call.outgoing else {
            throw .invalidAction("Call \(uuid.lowercased) is incoming; only an outgoing call reports connecting.")
        }
        guard call.state == .dialing || call.state == .connecting else {
            throw .invalidAction("Call \(uuid.lowercased) is \(call.state.rawValue); it can only connect while dialing or connecting.")
        }
        let time = at == 0 ? clock.now : at
        mutateCall(uuid) {
            $0.state = .active
            $0.hasConnected = true
            $0.connectedAt = time
            if $0.connectingAt == 0 { $0.connectingAt = time }
        }
    }

    /// Checks string lengths and the handle type against the provider.
    func validate(_ update: CallUpdate, for provider: Provider) throws(TelephonyError) {
        if let handle = update.handle {
            try validateHandle(handle, key: "Handle")
            guard provider.configuration.supports(handle.type) else {
                throw .invalidArguments("HandleType \(handle.type.rawValue) is not one provider \(provider.name) supports (\(provider.configuration.supportedHandleTypeList)).")
            }
        }
        if let name = update.localizedCallerName, name.utf8.count > SwitchboardLimits.maximumCallerNameBytes {
            throw .invalidArguments("LocalizedCallerName is \(name.utf8.count) bytes long; the limit is \(SwitchboardLimits.maximumCallerNameBytes).")
        }
    }

    func validateHandle(_ handle: Handle, key: String) throws(TelephonyError) {
        guard handle.value.utf8.count <= SwitchboardLimits.maximumHandleBytes else {
            throw .invalidArguments("\(key) is \(handle.value.utf8.count) bytes long; the limit is \(SwitchboardLimits.maximumHandleBytes).")
        }
    }

    /// The ring timeout: a call still ringing, that nobody is answering or
    /// ending, gets a system `end` action and will end as unanswered.
    func ringTimedOut(_ uuid: UUID) {
        ringTimers[uuid] = nil
        guard let call = liveCalls[uuid], call.state == .ringing else { return }
        let busy = pendingActions.values.contains {
            $0.action.callUUID == uuid && ($0.action.kind == .answer || $0.action.kind == .end)
        }
        guard !busy else { return }
        _ = try? submitTransaction([.end(uuid)], requester: nil, systemEndReason: .unanswered)
    }
}

extension ProviderConfiguration {
    var supportedHandleTypeList: String {
        HandleType.allCases.filter { supportedHandleTypes.contains($0) }.map(\.rawValue).joined(separator: ", ")
    }
}
