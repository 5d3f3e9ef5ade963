import FoundationEssentials
import ScreenText

/// What providers report: things the system did not cause.
extension Switchboard {
    /// A new incoming call, in one operation: admitted (the provider and the UUID checked once, the
    /// update's checks, the provider's and its app's call limits, then the flood guard), screened
    /// (`screening`: the caller named once, the block list, Do Not Disturb), then rung. A call
    /// admitted and then refused by screening has used its place in the flood guard (refused calls
    /// cost the service work as well) and goes in Recents (`callRefused`).
    public func reportNewIncomingCall(provider id: ProviderID, uuid: UUID, update: CallUpdate) throws(TelephonyError) -> Call {
        beginOperation(); defer { endOperation() }
        let provider = try requireProvider(id)
        guard liveCalls[uuid] == nil else { throw .callUUIDAlreadyExists(uuid) }
        let update = try checked(update, for: provider)
        let limits = options.limits
        let live = provider.callUUIDs.count
        guard live < limits.maximumCallsPerProvider else {
            throw .limitsExceeded("Provider \(provider.name) (\(id)) already has \(live) calls; the limit is \(limits.maximumCallsPerProvider).")
        }
        let account = provider.appAccount
        try admitCall(of: provider)
        let ringing = liveCalls.values.count { $0.appAccount == account && $0.state == .ringing }
        guard ringing < limits.maximumRingingCallsPerApp else {
            throw .limitsExceeded("The app of provider \(provider.name) (\(id)) already has \(ringing) ringing calls; the limit for one app is \(limits.maximumRingingCallsPerApp).")
        }
        try admitIncomingCall(of: provider)

        var call = Call(
            uuid: uuid, provider: provider.id, providerName: provider.name,
            handle: Handle(type: .generic, value: ""), callerName: "",
            outgoing: false, state: .ringing, hasVideo: false, startedAt: clock.now)
        call.appAccount = provider.appAccount
        call.appKey = provider.appKey
        call.appLabel = provider.appLabel
        call.apply(update)
        if let handle = update.handle, let screening {
            let caller = screening.screen(handle, supplied: call.callerName, now: clock.now)
            if let refusal = caller.verdict.refusal {
                emit(.callRefused(RefusedCall(uuid: uuid, provider: provider, handle: handle, displayName: caller.displayName,
                                              status: refusal.status, at: clock.now)))
                throw refusal.error
            }
            call.displayName = caller.displayName
        } else {
            call.displayName = displayName(of: call)
        }
        addCall(call)
        ringTimers[uuid] = clock.schedule(after: options.ringTimeout) { [weak self] in
            self?.ringTimedOut(uuid)
        }
        return call
    }

    /// One more live call for the provider's app, or `limitsExceeded`. `planned`: calls of the app
    /// that a transaction being planned adds.
    func admitCall(of provider: Provider, planned: Int = 0) throws(TelephonyError) {
        let limit = options.limits.maximumCallsPerApp
        let account = provider.appAccount
        let live = liveCalls.values.count { $0.appAccount == account } + planned
        guard live < limit else {
            throw .limitsExceeded("The app of provider \(provider.name) (\(provider.id)) already has \(live) calls; the limit for one app is \(limit).")
        }
    }

    /// The flood guard: takes a token from the app's bucket (all its providers share one, and it
    /// outlives them: registering again does not refill it), or refuses.
    func admitIncomingCall(of provider: Provider) throws(TelephonyError) {
        let limits = options.limits
        try take(from: \.incomingCalls, provider.appAccount, capacity: limits.incomingCallBurst, perSecond: limits.incomingCallsPerSecond,
                 what: "reports incoming calls too fast (provider \(provider.name) (\(provider.id))); the limit is \(limits.incomingCallBurst) at once, "
                    + "then \(Figures.plain(limits.incomingCallsPerSecond)) per second")
    }

    public func reportCallUpdated(provider id: ProviderID, uuid: UUID, update: CallUpdate) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        let provider = try requireProvider(id)
        _ = try requireCall(uuid, of: id)
        let update = try checked(update, for: provider)
        mutateCall(uuid) { $0.apply(update) }
    }

    /// The call ended without the user's doing (`at` == 0 means now). A pending
    /// `end` on it counts as fulfilled; its other pending actions fail.
    public func reportCallEnded(provider id: ProviderID, uuid: UUID, reason: EndReason, at: UInt64) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        let call = try requireCall(uuid, of: id)
        endCall(uuid, reason: reason, at: try reportedTime(at, of: call, argument: "ended_at"))
        resumeStrandedCalls()
    }

    public func reportOutgoingCallStartedConnecting(provider id: ProviderID, uuid: UUID, at: UInt64) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        let call = try requireCall(uuid, of: id)
        guard call.outgoing else {
            throw .invalidAction("Call \(uuid.apiString) is incoming; only an outgoing call starts connecting.")
        }
        switch call.state {
        case .dialing:
            let time = try reportedTime(at, of: call, argument: "at")
            mutateCall(uuid) { $0.move(to: .connecting, at: time) }
        case .connecting:
            break // Reported twice: nothing new.
        default:
            throw .invalidAction("Call \(uuid.apiString) is \(call.state.rawValue); it can only start connecting while dialing.")
        }
    }

    public func reportOutgoingCallConnected(provider id: ProviderID, uuid: UUID, at: UInt64) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        let call = try requireCall(uuid, of: id)
        guard call.outgoing else {
            throw .invalidAction("Call \(uuid.apiString) is incoming; only an outgoing call reports connecting.")
        }
        guard call.state == .dialing || call.state == .connecting else {
            throw .invalidAction("Call \(uuid.apiString) is \(call.state.rawValue); it can only connect while dialing or connecting.")
        }
        let time = try reportedTime(at, of: call, argument: "at")
        mutateCall(uuid) { $0.move(to: .active, at: time) }
    }

    /// A time an app reported about `call` (0 = now), taken only within [the call's start, now +
    /// `reportedTimeLeeway`]: a time far in the future or past would order Recents wrongly, and
    /// one past `Int64.max` cannot be stored at all.
    func reportedTime(_ time: UInt64, of call: Call?, argument: String) throws(TelephonyError) -> UInt64 {
        let now = clock.now
        guard time != 0 else { return now }
        let earliest = call?.startedAt ?? 0
        let (sum, overflow) = now.addingReportingOverflow(SwitchboardLimits.reportedTimeLeeway)
        let latest = overflow ? UInt64.max : sum
        guard time >= earliest && time <= latest else {
            throw .invalidArguments("\(argument) is \(time) µs since the epoch; it must be 0 (now) or between the call's start (\(earliest)) "
                + "and 60 s from now (\(latest)).")
        }
        return time
    }

    /// A report's update, within the bounds and supported by the provider, its handle cleaned rather
    /// than refused: an app's report tells of a call that exists, from a caller ID the app does not
    /// choose, and CallKit rings it whatever the handle holds; cleaned (`ScreenText.cleanHandle`:
    /// controls and bidi characters out), it is shown, matched against the block list, kept in
    /// Recents and called back as it reads. The handle is read once, by the cleaning: a cleaned one
    /// holds nothing `validateHandle` would refuse.
    func checked(_ update: CallUpdate, for provider: Provider) throws(TelephonyError) -> CallUpdate {
        var update = update
        if let handle = update.handle {
            // Over the bound it is refused as it is, never scanned: a 64 MiB handle costs a length
            // check, not a walk through its characters on the executor.
            try checkHandleLength(handle, key: "Handle")
            update.handle = Handle(type: handle.type, value: ScreenText.cleanHandle(handle.value))
            guard provider.configuration.supports(handle.type) else {
                throw .invalidArguments("HandleType \(handle.type.rawValue) is not one provider \(provider.name) supports (\(provider.configuration.supportedHandleTypeList)).")
            }
        }
        if let name = update.localizedCallerName, name.utf8.count > SwitchboardLimits.maximumCallerNameBytes {
            throw .invalidArguments("LocalizedCallerName is \(name.utf8.count) bytes long; the limit is \(SwitchboardLimits.maximumCallerNameBytes).")
        }
        return update
    }

    /// The handle's length, and what it holds: every handle to call passes here (StartCall,
    /// RequestTransaction, a link, a search result, a favorite, Recents), whoever asks.
    func validateHandle(_ handle: Handle, key: String) throws(TelephonyError) {
        try checkHandleLength(handle, key: key)
        if let refusal = ScreenText.handleRefusal(handle.value, named: key) { throw .invalidArguments(refusal + ".") }
    }

    private func checkHandleLength(_ handle: Handle, key: String) throws(TelephonyError) {
        guard handle.value.utf8.count <= SwitchboardLimits.maximumHandleBytes else {
            throw .invalidArguments("\(key) is \(handle.value.utf8.count) bytes long; the limit is \(SwitchboardLimits.maximumHandleBytes).")
        }
    }

    /// The ring timeout: a call still ringing, that nobody is answering or
    /// ending, gets a system `end` action and will end as unanswered.
    func ringTimedOut(_ uuid: UUID) {
        beginOperation(); defer { endOperation() }
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
