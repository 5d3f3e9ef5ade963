import Dispatch
import FoundationEssentials
import ScreenText

/// What the switchboard tells the service, in causal order, once the operation that caused it is complete.
public enum SwitchboardEvent: Sendable {
    /// The service then sends DidBegin.
    case providerRegistered(Provider)
    case providerRemoved(Provider)
    case callAdded(Call)
    /// After every change of a published property, with the new value.
    case callChanged(Call)
    /// After the final `callChanged` with state `.ended` and `hasEnded`.
    case callRemoved(Call)
    /// An incoming call screening refused before it rang (it goes in Recents).
    case callRefused(RefusedCall)
    /// To the action's provider.
    case performAction(Action)
    /// To the action's provider.
    case actionTimedOut(Action)
    /// Exactly once per transaction; nil = success.
    case transactionCompleted(Transaction, TelephonyError?)
    case audioSessionActivated(ProviderID)
    case audioSessionDeactivated(ProviderID)
}

/// The telephony core: providers, calls, transactions and their actions.
///
/// Judgement calls (where the rules left room):
/// - `set-held(true)` on a held call, `set-held(false)` on an active one and
///   `set-group` with a call already in the same group are accepted and
///   dispatched; the provider's fulfilment changes nothing.
/// - Arbitration ends (rather than holds) a dialing or connecting call: there
///   is no conversation to hold yet. Active calls are held if they support it.
/// - A transaction may answer or start only one call (`invalidAction`).
/// - Any action on a call with a pending `end` (including the ring timeout's)
///   is `invalidAction` ("already being ended"); a second `answer` while one
///   is pending likewise.
/// - The ring timeout does nothing to a call whose answer (or end) is pending:
///   the answer's own action timeout decides.
/// - Start: an empty, too long handle or contact identifier is
///   `invalidArguments`; a handle type or video the chosen provider does not
///   support is `invalidAction`. Without an explicit provider, a requester that
///   owns several providers is routed among its own only.
/// - A call the system held for another call is resumed (system
///   `set-held(false)`) when that call ends as failed for any reason (provider
///   gone, answer or start failed or timed out), if no other call is active,
///   dialing or connecting and nothing else is being answered, started or resumed.
/// - Incoming calls are not checked against `supportsVideo`.
/// - `callChanged` is emitted for published properties only; the bookkeeping
///   (`heldBySystemFor`, `startFulfilled`) changes silently.
///
/// Not thread-safe by design: the owner calls it from one serial executor (a
/// DispatchQueue), and the clock runs its scheduled tasks on that same
/// executor. It never locks and never spawns threads.
public final class Switchboard {
    public let clock: TelephonyClock
    public let options: SwitchboardOptions
    /// Receives every event, synchronously, from inside the call that caused it.
    public var onEvent: ((SwitchboardEvent) -> Void)?
    /// Names callers and decides which incoming calls ring; without it every call rings, named
    /// as its app named it.
    public weak var screening: (any CallScreening)?
    private var pendingEvents: [SwitchboardEvent] = []
    private var operationDepth = 0
    private var deliveringEvents = false

    public private(set) var providers: [ProviderID: Provider] = [:]
    var nextProviderID: UInt64 = 1

    /// Live calls; `callSequence` keeps their start order.
    var liveCalls: [UUID: Call] = [:]
    var callSequence: [UUID: UInt64] = [:]
    var nextCallSequence: UInt64 = 0
    var ringTimers: [UUID: ScheduledTask] = [:]

    /// Actions dispatched and not yet fulfilled, failed or timed out.
    var pendingActions: [UUID: PendingAction] = [:]
    var nextActionSequence: UInt64 = 0
    /// Transactions with a pending action or not yet complete.
    var transactions: [UUID: TransactionRecord] = [:]
    /// What each app uses of the tables above, for the per-app limits.
    var accounts = AppAccounts()

    /// The provider holding the audio session.
    public private(set) var audioSessionHolder: ProviderID?
    /// When each call last started wanting audio (a sequence, not a time, so ties cannot happen).
    var audioStamps: [UUID: UInt64] = [:]
    var nextAudioStamp: UInt64 = 0

    /// Calls that ended as failed in the current operation; the calls the system
    /// held for them may need resuming (see `resumeStrandedCalls`).
    var failedCallsToCheck: [UUID] = []
    /// Providers being invalidated: their groups are not dissolved call by call.
    var invalidating: Set<ProviderID> = []

    public init(clock: TelephonyClock, options: SwitchboardOptions = .init()) {
        self.clock = clock
        self.options = options
    }

    // MARK: - Reading

    public func call(_ uuid: UUID) -> Call? { liveCalls[uuid] }

    /// Live calls, in start order.
    public var calls: [Call] {
        liveCalls.values.sorted { (callSequence[$0.uuid] ?? 0) < (callSequence[$1.uuid] ?? 0) }
    }

    /// Registered providers, by id.
    public var orderedProviders: [Provider] {
        providers.values.sorted { $0.id < $1.id }
    }

    public func provider(_ id: ProviderID) -> Provider? { providers[id] }

    public func providers(ownedBy owner: String) -> [Provider] {
        providers.values.filter { $0.owner == owner }.sorted { $0.id < $1.id }
    }

    /// Live calls of one provider, in start order.
    public func calls(of provider: ProviderID) -> [Call] {
        providers[provider]?.callUUIDs.compactMap { liveCalls[$0] } ?? []
    }

    /// A pending (not yet fulfilled, failed or timed out) action.
    public func pendingAction(_ id: UUID) -> Action? { pendingActions[id]?.action }

    /// Pending actions, in dispatch order.
    public var allPendingActions: [Action] {
        pendingActions.values.sorted { $0.sequence < $1.sequence }.map(\.action)
    }

    /// A transaction that is not complete yet, or whose actions are still pending.
    public func transaction(_ id: UUID) -> Transaction? { transactions[id]?.transaction }

    // MARK: - Events

    /// Events wait until the operation that caused them is complete (`beginOperation` …
    /// `endOperation` around every operation, a timer's included), then go out in the order they
    /// happened. So an observer sees the calls as the operation left them: a hand-over of the audio
    /// session from one call to another is over, a held call has been resumed.
    func emit(_ event: SwitchboardEvent) {
        pendingEvents.append(event)
        if operationDepth == 0 { deliverEvents() }
    }

    func beginOperation() { operationDepth += 1 }

    func endOperation() {
        operationDepth -= 1
        if operationDepth == 0 { deliverEvents() }
    }

    /// An observer that starts an operation of its own while told of one: its events go out after
    /// the ones already waiting, from the loop below.
    private func deliverEvents() {
        guard !deliveringEvents else { return }
        deliveringEvents = true
        defer { deliveringEvents = false }
        // Taken a batch at a time (ending all calls makes thousands): events an observer causes
        // meanwhile wait for the next batch.
        while !pendingEvents.isEmpty {
            let batch = pendingEvents
            pendingEvents = []
            for event in batch { onEvent?(event) }
        }
    }

    // MARK: - The ringtone

    /// Silences a ringing call's ringtone (iOS: the side button): it keeps ringing on screen and in
    /// its app. Silencing it again changes nothing.
    public func silence(_ uuid: UUID) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        guard var call = liveCalls[uuid] else { throw .unknownCallUUID(uuid) }
        guard call.state == .ringing else { throw .invalidAction("Cannot silence call \(uuid.apiString): it is not ringing.") }
        guard !call.silenced else { return }
        call.silenced = true
        liveCalls[uuid] = call
        emit(.callChanged(call))
    }

    // MARK: - Providers

    /// `appID`: the sandboxed app behind `owner` ("" for a host app); `process`: who pays for it
    /// (`Provider.process`), so that a host process's new Names get no more providers or registrations.
    public func registerProvider(owner: String, appID: String = "", process: String = "", appLabel: String = "",
                                 configuration: ProviderConfiguration) throws(TelephonyError) -> Provider {
        beginOperation(); defer { endOperation() }
        try configuration.validate()
        if !appID.isEmpty { try configuration.validateForSandboxedApp() }
        let limits = options.limits
        let owned = providers.values.count { $0.owner == owner }
        guard owned < limits.maximumProvidersPerOwner else {
            throw .limitsExceeded("The connection \(owner) already has \(owned) providers registered; the limit is \(limits.maximumProvidersPerOwner).")
        }
        guard providers.count < limits.maximumProviders else {
            throw .limitsExceeded("The service already has \(providers.count) providers registered; the limit is \(limits.maximumProviders).")
        }
        try admitRegistration(owner: owner, appID: appID, process: process, name: configuration.name)
        let id = ProviderID(nextProviderID)
        nextProviderID += 1
        let provider = Provider(id: id, owner: owner, appID: appID, process: process, appLabel: appLabel, configuration: configuration, callUUIDs: [])
        providers[id] = provider
        emit(.providerRegistered(provider))
        return provider
    }

    /// A registration by `owner` (of the sandboxed app `appID`, "" for a host app, registering as
    /// `name`): per app, at most `maximumProvidersPerApp` providers over all its connections, and
    /// `registrationsPerMinute`, counted against the app's account (`Provider.appAccount`).
    /// A host app is counted by its process (`process`) as well as by its Name: new Names from one
    /// process get no more providers and no more registrations.
    func admitRegistration(owner: String, appID: String, process: String, name: String) throws(TelephonyError) {
        let limits = options.limits
        let account = Provider.appAccount(appID: appID, name: name)
        if !appID.isEmpty {
            let owned = providers.values.count { $0.appID == appID }
            guard owned < limits.maximumProvidersPerApp else {
                throw .limitsExceeded("The app \(appID) already has \(owned) providers registered; the limit is \(limits.maximumProvidersPerApp).")
            }
        } else if !process.isEmpty {
            let owned = providers.values.count { $0.process == process }
            guard owned < limits.maximumProvidersPerApp else {
                throw .limitsExceeded("This process already has \(owned) providers registered, under whatever names; the limit is \(limits.maximumProvidersPerApp).")
            }
        }
        let what = "registers providers too often; the limit is \(limits.registrationsPerMinute) a minute"
        let perSecond = Double(limits.registrationsPerMinute) / 60
        if appID.isEmpty, !process.isEmpty {
            // The process first: a new Name comes with a full bucket of its own, the process does not.
            try accounts.take(from: \.registrations, process, capacity: limits.registrationsPerMinute, perSecond: perSecond, what: what, at: clock.now)
        }
        try accounts.take(from: \.registrations, account, capacity: limits.registrationsPerMinute, perSecond: perSecond, what: what, at: clock.now)
    }

    /// Ends the provider's calls as failed, drops its pending actions (their
    /// transactions fail), removes it. Unknown ids are ignored.
    public func invalidateProvider(_ id: ProviderID) {
        beginOperation(); defer { endOperation() }
        guard let provider = providers[id] else { return }
        // Pending actions first: they are dropped, not performed.
        for pending in pendingActions.values.sorted(by: { $0.sequence < $1.sequence }) where pending.action.provider == id {
            dropAction(pending.action.id, error: .actionFailed(
                "The \(pending.action.kind.name) action on call \(pending.action.callUUID.apiString) was not performed: provider \(provider.name) (\(id)) went away."))
        }
        invalidating.insert(id)
        for uuid in provider.callUUIDs {
            endCall(uuid, reason: .failed, at: clock.now)
        }
        invalidating.remove(id)
        providers[id] = nil
        emit(.providerRemoved(provider))
        updateAudioSession()
        resumeStrandedCalls()
    }

    /// The bus connection left: every provider it owns is invalidated.
    public func ownerVanished(_ owner: String) {
        beginOperation(); defer { endOperation() }
        for provider in providers(ownedBy: owner) {
            invalidateProvider(provider.id)
        }
        accounts.forgetConnection(owner)
    }

    func requireProvider(_ id: ProviderID) throws(TelephonyError) -> Provider {
        guard let provider = providers[id] else {
            throw .unknownCallProvider("There is no provider \(id).")
        }
        return provider
    }

    /// The provider's own live call; another provider's call is unknown to it.
    func requireCall(_ uuid: UUID, of provider: ProviderID) throws(TelephonyError) -> Call {
        _ = try requireProvider(provider)
        guard let call = liveCalls[uuid], call.provider == provider else {
            throw .unknownCallUUID(uuid)
        }
        return call
    }

    // MARK: - What providers report: things the system did not cause

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
        try accounts.take(from: \.incomingCalls, provider.appAccount, capacity: limits.incomingCallBurst, perSecond: limits.incomingCallsPerSecond,
                          what: "reports incoming calls too fast (provider \(provider.name) (\(provider.id))); the limit is \(limits.incomingCallBurst) at once, "
                             + "then \(Figures.plain(limits.incomingCallsPerSecond)) per second", at: clock.now)
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

    // MARK: - Changing calls

    /// The caller's name as the user sees it, from the injected screening.
    func displayName(of call: Call) -> String {
        screening?.displayName(of: call.handle, supplied: call.callerName) ?? call.callerName
    }

    /// The user's names changed (a contact, a favorite): every live call is named again, and
    /// those whose name changed are announced.
    public func renameCallers() {
        beginOperation(); defer { endOperation() }
        for call in calls {
            mutateCall(call.uuid) { $0.displayName = displayName(of: $0) }
        }
    }

    func addCall(_ call: Call) {
        liveCalls[call.uuid] = call
        nextCallSequence += 1
        callSequence[call.uuid] = nextCallSequence
        providers[call.provider]?.callUUIDs.append(call.uuid)
        emit(.callAdded(call))
        if call.wantsAudio { stampAudio(call.uuid) }
        updateAudioSession()
    }

    /// Applies `change` to a live call; emits `callChanged` if a published
    /// property changed, then recomputes the audio session.
    @discardableResult
    func mutateCall(_ uuid: UUID, _ change: (inout Call) -> Void) -> Call? {
        guard var call = liveCalls[uuid] else { return nil }
        let before = call
        change(&call)
        if call.handle != before.handle || call.callerName != before.callerName { call.displayName = displayName(of: call) }
        liveCalls[uuid] = call
        if call.wantsAudio && !before.wantsAudio { stampAudio(uuid) }
        if call.publishedDiffers(from: before) {
            emit(.callChanged(call))
        }
        updateAudioSession()
        return call
    }

    /// Ends a live call: final `callChanged`, `callRemoved`, then the pending
    /// actions on it are settled (a pending `end` counts as fulfilled, the
    /// others fail). The call is forgotten; its UUID may be used again.
    func endCall(_ uuid: UUID, reason: EndReason?, at: UInt64) {
        guard var call = liveCalls[uuid] else { return }
        ringTimers.removeValue(forKey: uuid)?.cancel()
        call.move(to: .ended, at: at == 0 ? clock.now : at, reason: reason)
        liveCalls[uuid] = nil
        callSequence[uuid] = nil
        audioStamps[uuid] = nil
        if var provider = providers[call.provider] {
            provider.callUUIDs.removeAll { $0 == uuid }
            providers[call.provider] = provider
        }
        emit(.callChanged(call))
        updateAudioSession()
        emit(.callRemoved(call))
        leaveGroup(call)
        if reason == .failed { failedCallsToCheck.append(uuid) }
        settleActions(onEndedCall: uuid)
    }

    /// Ends every live call, in the order they came, as `reason`, now: the service is
    /// stopping. Returns the providers whose calls ended, to be told.
    public func endAllCalls(reason: EndReason) -> [ProviderID] {
        beginOperation(); defer { endOperation() }
        let calls = liveCalls.values.sorted { (callSequence[$0.uuid] ?? 0) < (callSequence[$1.uuid] ?? 0) }
        var providers: [ProviderID] = []
        for call in calls {
            if !providers.contains(call.provider) { providers.append(call.provider) }
            endCall(call.uuid, reason: reason, at: 0)
        }
        return providers
    }

    /// A departing call leaves its group; a group left with one call dissolves.
    func leaveGroup(_ call: Call) {
        guard let group = call.group, !invalidating.contains(call.provider) else { return }
        let rest = liveCalls.values.filter { $0.uuid != call.uuid && $0.group == group && $0.provider == call.provider }
        if rest.count == 1, let last = rest.first {
            mutateCall(last.uuid) { $0.group = nil }
        }
    }

    // MARK: - Audio session

    func stampAudio(_ uuid: UUID) {
        nextAudioStamp += 1
        audioStamps[uuid] = nextAudioStamp
    }

    /// One provider at a time holds the audio session: the one whose call most
    /// recently started wanting audio. Emits only on transitions, the old
    /// holder's deactivation before the new holder's activation.
    func updateAudioSession() {
        var best: (stamp: UInt64, provider: ProviderID)?
        for call in liveCalls.values where call.wantsAudio {
            let stamp = audioStamps[call.uuid] ?? 0
            if best == nil || stamp > best!.stamp { best = (stamp, call.provider) }
        }
        let holder = best?.provider
        guard holder != audioSessionHolder else { return }
        if let old = audioSessionHolder {
            audioSessionHolder = nil
            emit(.audioSessionDeactivated(old))
        }
        audioSessionHolder = holder
        if let holder { emit(.audioSessionActivated(holder)) }
    }
}

extension ProviderConfiguration {
    var supportedHandleTypeList: String {
        HandleType.allCases.filter { supportedHandleTypes.contains($0) }.map(\.rawValue).joined(separator: ", ")
    }
}
