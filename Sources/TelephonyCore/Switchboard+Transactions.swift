import FoundationEssentials

/// A transaction, from request to settlement, in the order it runs: asked for (`requestTransaction`),
/// planned against a simulation of its effects (`makePlan`), arbitrated against the other calls
/// (`arbitrate`, call groups), admitted against the app's share (`admitTransaction`), dispatched to
/// the providers, then settled by their answers or a timeout; last, calls the system held and no
/// longer needs to are resumed.

/// An action between dispatch and its fulfilment, failure or timeout.
struct PendingAction {
    let action: Action
    let sequence: UInt64
    var timer: ScheduledTask?
    /// The reason a system `end` gives the call whatever its outcome (the ring
    /// timeout's `.unanswered`); nil for the user's own `end`.
    let systemEndReason: EndReason?
    /// For an arbitration `set-held(true)`: the call it makes room for.
    let heldFor: UUID?
}

/// A transaction and which of its actions are still pending.
struct TransactionRecord {
    var transaction: Transaction
    var remaining: Set<UUID>
    /// The app it is counted against; nil for the user's own (`AppAccounts`).
    let account: String?
}

/// One action of a validated transaction, before dispatch.
struct PlannedAction {
    let callUUID: UUID
    let provider: ProviderID
    let kind: ActionKind
    let addedBySystem: Bool
    /// For an arbitration hold: the call it makes room for.
    let heldFor: UUID?
}

/// A transaction checked against a simulation of its effects: `overlay` holds
/// the calls as they will be once every action succeeds, `ending` the calls it ends.
struct TransactionPlan {
    var actions: [PlannedAction] = []
    var newCalls: [Call] = []
    var overlay: [UUID: Call] = [:]
    var ending: Set<UUID> = []
    /// Providers whose number of call groups may grow, with the reason.
    var groupChecks: [(provider: ProviderID, reason: String)] = []
}

extension Switchboard {
    /// Validates the whole transaction, then dispatches it: on any error
    /// nothing happens. The returned transaction is pending; it completes
    /// (`transactionCompleted`) when every action is fulfilled or on the first failure.
    /// `app`: the sandboxed app behind the requester ("" for a host app, or the system): a sandboxed
    /// app acts on its own providers' calls only, even when its connection owns no provider.
    public func requestTransaction(_ requests: [ActionRequest], requester: String?, app: String = "") throws(TelephonyError) -> Transaction {
        beginOperation(); defer { endOperation() }
        let transaction = try submitTransaction(requests, requester: requester, app: app, systemEndReason: nil)
        resumeStrandedCalls()
        return transaction
    }

    func submitTransaction(_ requests: [ActionRequest], requester: String?, app: String = "", systemEndReason: EndReason?) throws(TelephonyError) -> Transaction {
        let plan = try makePlan(requests, requester: requester, app: app)
        let account = account(requester: requester, app: app)
        try admitTransaction(requests, account: account)
        return dispatch(plan, requester: requester, account: account, systemEndReason: systemEndReason)
    }

    // MARK: - Planning

    /// Validates every request against the state the earlier ones leave,
    /// adds the arbitration actions and checks the group limits. Throws the
    /// first error; changes nothing.
    func makePlan(_ requests: [ActionRequest], requester: String?, app: String = "") throws(TelephonyError) -> TransactionPlan {
        guard !requests.isEmpty else { throw .emptyTransaction }
        let limit = options.limits.maximumActionsPerTransaction
        guard requests.count <= limit else {
            throw .limitsExceeded("The transaction has \(requests.count) actions; the limit is \(limit).")
        }
        let entitlement = Entitlement(requester: requester, app: app,
                                      owned: Set(app.isEmpty ? requester.map { providers(ownedBy: $0).map(\.id) } ?? []
                                                              : providers.values.filter { $0.appID == app }.map(\.id)))
        var plan = TransactionPlan()
        for request in requests {
            try planAction(request, entitlement, into: &plan)
        }
        try arbitrate(&plan)
        guard plan.actions.count <= limit else {
            throw .limitsExceeded("With the actions the system adds to hold or end other calls, the transaction has \(plan.actions.count) actions; the limit is \(limit).")
        }
        try checkGroupLimits(plan)
        return plan
    }

    /// The call as the plan leaves it; nil if unknown.
    func simulatedCall(_ uuid: UUID, in plan: TransactionPlan) -> Call? {
        plan.overlay[uuid] ?? liveCalls[uuid]
    }

    func hasPendingAction(on uuid: UUID, where predicate: (ActionKind) -> Bool) -> Bool {
        pendingActions.values.contains { $0.action.callUUID == uuid && predicate($0.action.kind) }
    }

    private func planAction(_ request: ActionRequest, _ entitlement: Entitlement, into plan: inout TransactionPlan) throws(TelephonyError) {
        let uuid = request.callUUID
        if case .start(let handle, let video, let contact) = request.kind {
            try planStart(uuid, handle: handle, video: video, contact: contact, explicitProvider: request.provider,
                          entitlement, into: &plan)
            return
        }
        let found = simulatedCall(uuid, in: plan)
        // A sandboxed app hears the same of another app's call and of none: nothing of either.
        if entitlement.isSandboxed, found.map({ !entitlement.allows($0.provider) }) ?? true {
            throw .unentitled("\(entitlement.who) may not act on call \(uuid.apiString): it is not one of its own calls.")
        }
        guard var call = found else { throw .unknownCallUUID(uuid) }
        if !entitlement.allows(call.provider) {
            throw .unentitled("\(entitlement.who) may not act on call \(uuid.apiString): it belongs to provider \(call.providerName) (\(call.provider)), \(entitlement.notOwned).")
        }
        let what = "Cannot \(request.kind.name) call \(uuid.apiString)"
        guard !plan.ending.contains(uuid) else {
            throw .invalidAction("\(what): an earlier action of this transaction ends it.")
        }
        if hasPendingAction(on: uuid, where: { $0 == .end }) {
            throw .invalidAction("\(what): it is already being ended.")
        }
        let state = call.state.rawValue
        switch request.kind {
        case .start:
            preconditionFailure("handled above")
        case .answer:
            guard !call.outgoing else { throw .invalidAction("\(what): it is an outgoing call.") }
            guard call.state == .ringing else { throw .invalidAction("\(what): it is \(state), not ringing.") }
            guard !hasPendingAction(on: uuid, where: { $0 == .answer }) else {
                throw .invalidAction("\(what): it is already being answered.")
            }
            call.move(to: .active, at: clock.now)
            plan.groupChecks.append((call.provider, "answering call \(uuid.apiString)"))
        case .end:
            plan.ending.insert(uuid)
        case .setHeld(let onHold):
            // Holding a held call (or resuming an active one) is accepted and
            // dispatched as a no-op: the provider can resync its state.
            if onHold && !call.supportsHolding {
                throw .invalidAction("\(what): it does not support holding.")
            }
            guard call.state == .active || call.state == .held else {
                throw .invalidAction("\(what): it is \(state); only an active or held call can be held or resumed.")
            }
            call.move(to: onHold ? .held : .active, at: clock.now)
        case .setMuted(let muted):
            call.muted = muted
        case .setGroup(let other):
            try planGroup(&call, with: other, what: what, into: &plan)
        case .playDTMF(let digits, _):
            guard call.supportsDTMF else { throw .invalidAction("\(what): it does not support DTMF.") }
            guard call.state == .active || call.state == .dialing || call.state == .connecting else {
                throw .invalidAction("\(what): it is \(state); tones can be played only on an active, dialing or connecting call.")
            }
            guard !digits.isEmpty else { throw .invalidAction("\(what): there are no digits to play.") }
            guard digits.unicodeScalars.count <= SwitchboardLimits.maximumDTMFDigits else {
                throw .invalidArguments("Digits has \(digits.unicodeScalars.count) characters; the limit is \(SwitchboardLimits.maximumDTMFDigits).")
            }
            if let bad = digits.unicodeScalars.first(where: { !Self.dtmfCharacters.contains($0) }) {
                throw .invalidAction("\(what): \"\(bad.escaped(asASCII: true))\" is not a DTMF digit (0-9 * # A-D , ; p w).")
            }
        }
        plan.overlay[uuid] = call
        plan.actions.append(PlannedAction(callUUID: uuid, provider: call.provider, kind: request.kind, addedBySystem: false, heldFor: nil))
    }

    static let dtmfCharacters = Set("0123456789*#ABCDabcd,;pwPW".unicodeScalars)

    private func planStart(_ uuid: UUID, handle: Handle, video: Bool, contact: String, explicitProvider: ProviderID?,
                           _ entitlement: Entitlement, into plan: inout TransactionPlan) throws(TelephonyError) {
        guard simulatedCall(uuid, in: plan) == nil else { throw .callUUIDAlreadyExists(uuid) }
        // Malformed arguments are InvalidArgs; a well-formed call the chosen
        // provider cannot place (handle type, video) is InvalidAction.
        guard !handle.value.isEmpty else { throw .invalidArguments("Handle must not be empty to start a call.") }
        try validateHandle(handle, key: "Handle")
        guard contact.utf8.count <= SwitchboardLimits.maximumContactIdentifierBytes else {
            throw .invalidArguments("ContactIdentifier is \(contact.utf8.count) bytes long; the limit is \(SwitchboardLimits.maximumContactIdentifierBytes).")
        }
        if entitlement.isSandboxed, let explicitProvider, !entitlement.owned.contains(explicitProvider) {
            throw .unentitled("\(entitlement.who) may not start a call with provider \(explicitProvider): it is not one of its own providers.")
        }
        let provider = try routeStart(handle: handle, video: video, explicit: explicitProvider, owned: entitlement.owned,
                                      onlyOwned: entitlement.isSandboxed)
        if !entitlement.allows(provider.id) {
            throw .unentitled("\(entitlement.who) may not start a call with provider \(provider.name) (\(provider.id)), \(entitlement.notOwned).")
        }
        let config = provider.configuration
        guard config.supports(handle.type) else {
            throw .invalidAction("Cannot start call \(uuid.apiString): provider \(provider.name) does not support \(handle.type.rawValue) handles (only \(config.supportedHandleTypeList)).")
        }
        guard !video || config.supportsVideo else {
            throw .invalidAction("Cannot start video call \(uuid.apiString): provider \(provider.name) does not support video.")
        }
        let limit = options.limits.maximumCallsPerProvider
        let count = provider.callUUIDs.count + plan.newCalls.count { $0.provider == provider.id }
        guard count < limit else {
            throw .limitsExceeded("Provider \(provider.name) (\(provider.id)) already has \(count) calls; the limit is \(limit).")
        }
        try admitCall(of: provider, planned: plan.newCalls.count { $0.appAccount == provider.appAccount })
        var call = Call(uuid: uuid, provider: provider.id, providerName: provider.name, handle: handle,
                        callerName: "", outgoing: true, state: .dialing, hasVideo: video, startedAt: clock.now)
        call.appAccount = provider.appAccount
        call.appKey = provider.appKey
        call.appLabel = provider.appLabel
        call.displayName = displayName(of: call)
        plan.newCalls.append(call)
        plan.overlay[uuid] = call
        plan.groupChecks.append((provider.id, "starting call \(uuid.apiString)"))
        plan.actions.append(PlannedAction(callUUID: uuid, provider: provider.id,
                                          kind: .start(handle: handle, video: video, contactIdentifier: contact),
                                          addedBySystem: false, heldFor: nil))
    }

    /// The provider named in the request; else the requester's only provider;
    /// else the one provider (among the requester's own, if it has several,
    /// else among all) that supports the handle type and video.
    /// `onlyOwned`: a sandboxed app's calls go through its own providers only (the others' are not named to it).
    private func routeStart(handle: Handle, video: Bool, explicit: ProviderID?, owned: Set<ProviderID>, onlyOwned: Bool = false) throws(TelephonyError) -> Provider {
        if let explicit {
            guard let provider = providers[explicit] else {
                throw .unknownCallProvider("There is no provider \(explicit).")
            }
            return provider
        }
        if owned.count == 1, let only = owned.first, let provider = providers[only] {
            return provider
        }
        let pool = owned.isEmpty && !onlyOwned ? orderedProviders : orderedProviders.filter { owned.contains($0.id) }
        let fitting = pool.filter {
            $0.configuration.supports(handle.type) && (!video || $0.configuration.supportsVideo)
        }
        let article = handle.type.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        let what = "\(video ? "a video call" : "a call") to \(article) \(handle.type.rawValue) handle"
        switch fitting.count {
        case 1:
            return fitting[0]
        case 0:
            throw .unknownCallProvider("No provider can place \(what).")
        default:
            let names = fitting.prefix(5).map { "\($0.name) (\($0.id))" }.joined(separator: ", ")
            throw .unknownCallProvider("\(fitting.count) providers can place \(what) (\(names)\(fitting.count > 5 ? ", ..." : "")); say which one.")
        }
    }

    // MARK: - Arbitration: holding or ending the other calls for a new one, call groups


    /// When the transaction answers, starts or resumes a call, every other call
    /// that is active, dialing or connecting, not on hold, not in the new call's
    /// group and not already being held or ended, of any provider, gets an
    /// action in front of it: `set-held(true)` if it is active and supports
    /// holding, else `end` (a dialing or connecting call has no conversation to
    /// hold yet, so it is ended). A held call whose resume is pending counts as
    /// active. Resuming counts like answering because a desktop has one
    /// microphone: `monkeycall resume` on one app's held call while another
    /// app's call is active must not leave both active.
    func arbitrate(_ plan: inout TransactionPlan) throws(TelephonyError) {
        let targets = plan.actions.enumerated().filter { $0.element.kind.bringsCallUp || $0.element.kind == .setHeld(false) }
        guard let first = targets.first else { return }
        let answersOrStarts = targets.filter { $0.element.kind.bringsCallUp }.count
        guard answersOrStarts <= 1 else {
            throw .invalidAction("A transaction may answer or start only one call; this one has \(answersOrStarts) such actions.")
        }
        let targetUUIDs = Set(targets.map(\.element.callUUID))
        // Calls of one group come up together; calls apart would be two conversations at once.
        let comingUp = Set(targetUUIDs.map { simulatedCall($0, in: plan)?.group ?? $0 })
        guard comingUp.count == 1 else {
            throw .invalidAction("A transaction may bring up only one call or one call group; this one answers, starts or resumes \(targetUUIDs.count) calls that are not in one group.")
        }
        let targetUUID = first.element.callUUID
        let targetGroup = simulatedCall(targetUUID, in: plan)?.group
        var added: [PlannedAction] = []
        for call in calls where !targetUUIDs.contains(call.uuid) && !plan.ending.contains(call.uuid) {
            let simulated = plan.overlay[call.uuid] ?? call
            // A held call whose resume is pending (and not overridden by this
            // transaction) is about to be active: it is held again too.
            let resuming = simulated.onHold && plan.overlay[call.uuid] == nil
                && hasPendingAction(on: call.uuid, where: { $0 == .setHeld(false) })
            guard !simulated.onHold || resuming,
                  simulated.state == .active || simulated.state == .dialing || simulated.state == .connecting || resuming,
                  targetGroup == nil || simulated.group != targetGroup,
                  !hasPendingAction(on: call.uuid, where: { $0 == .end || $0 == .setHeld(true) })
            else { continue }
            if (simulated.state == .active || resuming) && simulated.supportsHolding {
                added.append(PlannedAction(callUUID: call.uuid, provider: call.provider, kind: .setHeld(true),
                                           addedBySystem: true, heldFor: targetUUID))
                var held = simulated
                held.move(to: .held, at: clock.now)
                plan.overlay[call.uuid] = held
            } else {
                added.append(PlannedAction(callUUID: call.uuid, provider: call.provider, kind: .end,
                                           addedBySystem: true, heldFor: nil))
                plan.ending.insert(call.uuid)
            }
        }
        plan.actions.insert(contentsOf: added, at: first.offset)
    }

    /// The groups a provider would have under the plan: every live call that
    /// is not ringing (or is being answered) and not being ended; grouped calls
    /// count once per group, the others one each.
    func groupCount(of providerID: ProviderID, in plan: TransactionPlan) -> Int {
        guard let provider = providers[providerID] else { return 0 }
        // Group ids are borrowed call UUIDs, so they are kept apart from the
        // ungrouped calls, which count one each.
        var groups = Set<UUID>()
        var alone = 0
        let uuids = provider.callUUIDs + plan.newCalls.filter { $0.provider == providerID }.map(\.uuid)
        for uuid in uuids where !plan.ending.contains(uuid) {
            guard let call = simulatedCall(uuid, in: plan) else { continue }
            let answering = call.state == .ringing && hasPendingAction(on: uuid, where: { $0 == .answer })
            guard call.countsAsGroup || answering else { continue }
            if let group = call.group { groups.insert(group) } else { alone += 1 }
        }
        return groups.count + alone
    }

    func checkGroupLimits(_ plan: TransactionPlan) throws(TelephonyError) {
        for check in plan.groupChecks {
            guard let provider = providers[check.provider] else { continue }
            let count = groupCount(of: check.provider, in: plan)
            let limit = provider.configuration.maximumCallGroups
            if count > limit {
                throw .maximumCallGroupsReached("Provider \(provider.name) allows \(limit) call group\(limit == 1 ? "" : "s"); \(check.reason) would make \(count).")
            }
        }
    }

    /// Validates `set-group` and applies it to the simulation.
    func planGroup(_ call: inout Call, with other: UUID?, what: String, into plan: inout TransactionPlan) throws(TelephonyError) {
        guard call.countsAsGroup else {
            throw .invalidAction("\(what): it is \(call.state.rawValue); only a call that is not ringing can be grouped.")
        }
        guard let otherUUID = other else {
            guard let group = call.group else { throw .invalidAction("\(what): it is not in a group.") }
            guard call.supportsUngrouping else { throw .invalidAction("\(what): it does not support ungrouping.") }
            call.group = nil
            plan.overlay[call.uuid] = call
            let rest = members(of: group, provider: call.provider, in: plan).filter { $0.uuid != call.uuid }
            if rest.count == 1, var last = rest.first {
                last.group = nil
                plan.overlay[last.uuid] = last
            }
            plan.groupChecks.append((call.provider, "ungrouping call \(call.uuid.apiString)"))
            return
        }
        guard otherUUID != call.uuid else { throw .invalidAction("\(what): a call cannot be grouped with itself.") }
        guard var target = simulatedCall(otherUUID, in: plan) else { throw .unknownCallUUID(otherUUID) }
        guard !plan.ending.contains(otherUUID) else {
            throw .invalidAction("\(what): call \(otherUUID.apiString) is ended by an earlier action of this transaction.")
        }
        guard target.provider == call.provider else {
            // Not named: the requester may not be allowed to know whose it is.
            throw .invalidAction("\(what): call \(otherUUID.apiString) belongs to another provider.")
        }
        guard call.supportsGrouping else { throw .invalidAction("\(what): it does not support grouping.") }
        guard target.supportsGrouping else {
            throw .invalidAction("\(what): call \(otherUUID.apiString) does not support grouping.")
        }
        guard target.countsAsGroup else {
            throw .invalidAction("\(what): call \(otherUUID.apiString) is \(target.state.rawValue); only a call that is not ringing can be grouped.")
        }
        let groupID = target.group ?? target.uuid
        if call.group == groupID { return } // Already together: dispatched as a no-op.
        let size = (target.group.map { members(of: $0, provider: call.provider, in: plan).count } ?? 1) + 1
        let limit = providers[call.provider]?.configuration.maximumCallsPerCallGroup ?? 0
        guard size <= limit else {
            throw .maximumCallGroupsReached("\(what): the group would have \(size) calls; provider \(call.providerName) allows \(limit) calls per call group.")
        }
        if let old = call.group {
            let rest = members(of: old, provider: call.provider, in: plan).filter { $0.uuid != call.uuid }
            if rest.count == 1, var last = rest.first {
                last.group = nil
                plan.overlay[last.uuid] = last
            }
        }
        call.group = groupID
        target.group = groupID
        plan.overlay[otherUUID] = target
    }

    /// The live, not-ending calls of a group under the plan.
    private func members(of group: UUID, provider: ProviderID, in plan: TransactionPlan) -> [Call] {
        (providers[provider]?.callUUIDs ?? []).compactMap { uuid -> Call? in
            guard !plan.ending.contains(uuid), let call = simulatedCall(uuid, in: plan), call.group == group else { return nil }
            return call
        }
    }

    /// A fulfilled `set-group`: join `other`'s group (its id, or `other`'s UUID
    /// if it was alone), or leave the group (nil); a group left with one call dissolves.
    func applyGroup(_ uuid: UUID, with other: UUID?) {
        guard let call = liveCalls[uuid] else { return }
        let old = call.group
        var new: UUID?
        if let other {
            guard let target = liveCalls[other], target.provider == call.provider, other != uuid else { return }
            new = target.group ?? target.uuid
            mutateCall(other) { $0.group = new }
        }
        guard new != old else { return }
        mutateCall(uuid) { $0.group = new }
        if let old { dissolveIfSingle(old, provider: call.provider) }
    }

    func dissolveIfSingle(_ group: UUID, provider: ProviderID) {
        let rest = (providers[provider]?.callUUIDs ?? []).filter { liveCalls[$0]?.group == group }
        if rest.count == 1 { mutateCall(rest[0]) { $0.group = nil } }
    }

    // MARK: - Admission

    /// The account a request is counted against; nil for the user's own.
    func account(requester: String?, app: String) -> String? {
        if !app.isEmpty { return app }
        guard let requester, !providers(ownedBy: requester).isEmpty else { return nil }
        return requester
    }

    /// Refuses a transaction that would take an app over its share of the pending table, or over
    /// its rate of outgoing calls; the user's own requests only meet the table's overall size.
    func admitTransaction(_ requests: [ActionRequest], account: String?) throws(TelephonyError) {
        let limits = options.limits
        guard transactions.count < limits.maximumPendingTransactions else {
            throw .limitsExceeded("\(transactions.count) transactions are still pending; the limit is \(limits.maximumPendingTransactions).")
        }
        guard let account else { return }
        let mine = accounts.pendingTransactions[account, default: 0]
        guard mine < limits.maximumPendingTransactionsPerApp else {
            throw .limitsExceeded("\(account) has \(mine) transactions still pending; the limit for one app is \(limits.maximumPendingTransactionsPerApp).")
        }
        let forApps = limits.maximumPendingTransactions - limits.userReservedPendingTransactions
        guard accounts.appsPending < forApps else {
            throw .limitsExceeded("Apps have \(accounts.appsPending) transactions still pending; the limit for apps is \(forApps) (the rest is kept for the user's own actions).")
        }
        if requests.contains(where: { if case .start = $0.kind { true } else { false } }) {
            try accounts.take(from: \.starts, account, capacity: limits.outgoingCallBurst, perSecond: limits.outgoingCallsPerSecond,
                              what: "starts outgoing calls too fast; the limit is \(limits.outgoingCallBurst) at once, then \(Figures.plain(limits.outgoingCallsPerSecond)) per second",
                              at: clock.now)
        }
    }

    /// Counts a transaction that became pending, or one that is gone.
    func countPending(_ account: String?, _ change: Int) {
        guard let account else { return }
        let count = accounts.pendingTransactions[account, default: 0] + change
        accounts.pendingTransactions[account] = count > 0 ? count : nil
    }

    // MARK: - Dispatch

    private func dispatch(_ plan: TransactionPlan, requester: String?, account: String?, systemEndReason: EndReason?) -> Transaction {
        let id = UUID()
        let now = clock.now
        let (sum, overflow) = now.addingReportingOverflow(microseconds(options.actionTimeout))
        let deadline = overflow ? UInt64.max : sum
        let actions = plan.actions.map {
            Action(id: UUID(), transactionID: id, callUUID: $0.callUUID, provider: $0.provider,
                   kind: $0.kind, deadline: deadline, addedBySystem: $0.addedBySystem || requester == nil)
        }
        let transaction = Transaction(id: id, requester: requester, actions: actions, state: .pending)
        transactions[id] = TransactionRecord(transaction: transaction, remaining: Set(actions.map(\.id)), account: account)
        countPending(account, 1)

        for call in plan.newCalls { addCall(call) }
        for (action, planned) in zip(actions, plan.actions) {
            nextActionSequence += 1
            let actionID = action.id
            let timer = clock.schedule(after: options.actionTimeout) { [weak self] in
                self?.actionTimedOut(actionID)
            }
            pendingActions[actionID] = PendingAction(
                action: action, sequence: nextActionSequence, timer: timer,
                systemEndReason: action.kind == .end ? systemEndReason : nil, heldFor: planned.heldFor)
        }
        for action in actions where pendingActions[action.id] != nil {
            emit(.performAction(action))
        }
        return transactions[id]?.transaction ?? transaction
    }

    // MARK: - Provider answers

    /// The provider performed the action; `at` (0 = now) is when, for answer and end.
    public func fulfillAction(provider id: ProviderID, action actionID: UUID, at: UInt64) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        _ = try requireProvider(id)
        // The time is checked before the action is taken: a bad Date leaves it pending.
        guard let waiting = pendingActions[actionID], waiting.action.provider == id else { throw .unknownAction(actionID) }
        let time = try reportedTime(at, of: liveCalls[waiting.action.callUUID], argument: "Date")
        let pending = try takePending(actionID, of: id)
        applyFulfilment(pending, at: time)
        settle(pending.action, error: nil)
        resumeStrandedCalls()
    }

    public func failAction(provider id: ProviderID, action actionID: UUID) throws(TelephonyError) {
        beginOperation(); defer { endOperation() }
        let pending = try takePending(actionID, of: id)
        let action = pending.action
        applyFailure(pending)
        settle(action, error: .actionFailed(
            "Provider \(providers[id]?.name ?? String(describing: id)) failed the \(action.kind.name) action on call \(action.callUUID.apiString)."))
        resumeStrandedCalls()
    }

    private func takePending(_ actionID: UUID, of provider: ProviderID) throws(TelephonyError) -> PendingAction {
        _ = try requireProvider(provider)
        guard let pending = pendingActions[actionID], pending.action.provider == provider else {
            throw .unknownAction(actionID)
        }
        pendingActions[actionID] = nil
        pending.timer?.cancel()
        return pending
    }

    /// The action timeout fired: the action fails and can no longer be fulfilled.
    func actionTimedOut(_ actionID: UUID) {
        beginOperation(); defer { endOperation() }
        guard let pending = pendingActions.removeValue(forKey: actionID) else { return }
        let action = pending.action
        emit(.actionTimedOut(action))
        applyFailure(pending)
        settle(action, error: .actionTimedOut(
            "Provider \(providers[action.provider]?.name ?? String(describing: action.provider)) did not perform the \(action.kind.name) action on call \(action.callUUID.apiString) within \(formatSeconds(options.actionTimeout))."))
        resumeStrandedCalls()
    }

    /// Drops a pending action without effect (its provider went away).
    func dropAction(_ actionID: UUID, error: TelephonyError) {
        guard let pending = pendingActions.removeValue(forKey: actionID) else { return }
        pending.timer?.cancel()
        settle(pending.action, error: error)
    }

    /// The call ended: a pending `end` on it counts as fulfilled, the other
    /// pending actions on it fail.
    func settleActions(onEndedCall uuid: UUID) {
        let onCall = pendingActions.values.filter { $0.action.callUUID == uuid }.sorted { $0.sequence < $1.sequence }
        for pending in onCall {
            pendingActions[pending.action.id] = nil
            pending.timer?.cancel()
            if pending.action.kind == .end {
                settle(pending.action, error: nil)
            } else {
                settle(pending.action, error: .actionFailed(
                    "The \(pending.action.kind.name) action on call \(uuid.apiString) did not happen: the call ended."))
            }
        }
    }

    /// Records one action's outcome in its transaction; completes the
    /// transaction on the first failure or when the last action succeeds.
    func settle(_ action: Action, error: TelephonyError?) {
        guard var record = transactions[action.transactionID] else { return }
        record.remaining.remove(action.id)
        var completion: TelephonyError?? = nil
        if !record.transaction.isComplete {
            if let error {
                record.transaction.state = .failed(error)
                completion = .some(error)
            } else if record.remaining.isEmpty {
                record.transaction.state = .succeeded
                completion = .some(nil)
            }
        }
        if record.remaining.isEmpty && (record.transaction.isComplete) {
            transactions[action.transactionID] = nil
            countPending(record.account, -1)
        } else {
            transactions[action.transactionID] = record
        }
        if let completion {
            emit(.transactionCompleted(record.transaction, completion))
        }
    }

    // MARK: - Effects

    private func applyFulfilment(_ pending: PendingAction, at time: UInt64) {
        let action = pending.action
        let uuid = action.callUUID
        guard liveCalls[uuid] != nil else { return }
        switch action.kind {
        case .start:
            mutateCall(uuid) { $0.startFulfilled = true }
        case .answer:
            ringTimers.removeValue(forKey: uuid)?.cancel()
            mutateCall(uuid) {
                guard $0.state == .ringing else { return }
                $0.move(to: .active, at: time)
                $0.wasAnswered = true
            }
        case .end:
            endCall(uuid, reason: pending.systemEndReason, at: time)
        case .setHeld(let onHold):
            mutateCall(uuid) {
                guard $0.state == .active || $0.state == .held else { return }
                $0.move(to: onHold ? .held : .active, at: time)
                $0.heldBySystemFor = onHold ? pending.heldFor : nil
            }
        case .setMuted(let muted):
            mutateCall(uuid) { $0.muted = muted }
        case .setGroup(let other):
            applyGroup(uuid, with: other)
        case .playDTMF:
            break
        }
    }

    /// A failed or timed-out action: a start, answer or end leaves the call
    /// ended (failed; a system end keeps its reason); the others change nothing.
    private func applyFailure(_ pending: PendingAction) {
        let uuid = pending.action.callUUID
        switch pending.action.kind {
        case .start, .answer:
            endCall(uuid, reason: .failed, at: clock.now)
        case .end:
            endCall(uuid, reason: pending.systemEndReason ?? .failed, at: clock.now)
        default:
            break
        }
    }

    // MARK: - Resuming what the system held

    /// A call that the system held for a call that has since ended as failed
    /// (its provider vanished, or its answer or start failed) is not left
    /// stranded: when no other call is active, dialing or connecting, the
    /// system asks its provider to resume it (`set-held(false)`, requester nil).
    func resumeStrandedCalls() {
        guard !failedCallsToCheck.isEmpty else { return }
        let failed = Set(failedCallsToCheck)
        failedCallsToCheck.removeAll()
        let stranded = calls.filter { call in
            call.onHold && call.heldBySystemFor.map { failed.contains($0) } == true
        }
        guard let candidate = stranded.last else { return }
        for call in stranded { liveCalls[call.uuid]?.heldBySystemFor = nil }
        let busy = liveCalls.values.contains {
            !$0.onHold && ($0.state == .active || $0.state == .dialing || $0.state == .connecting)
        }
        let comingUp = pendingActions.values.contains { $0.action.kind.bringsCallUp || $0.action.kind == .setHeld(false) }
        guard !busy, !comingUp else { return }
        _ = try? submitTransaction([.setHeld(candidate.uuid, false)], requester: nil, systemEndReason: nil)
    }
}

/// Whose calls a requester may act on: a host connection that owns providers, its own
/// providers' only (one that owns none, the user's tools, any); a sandboxed app, its app's
/// providers' only, whichever connection registered them.
struct Entitlement {
    let requester: String?
    let app: String
    let owned: Set<ProviderID>

    func allows(_ provider: ProviderID) -> Bool {
        (app.isEmpty && owned.isEmpty) || owned.contains(provider)
    }

    var isSandboxed: Bool { !app.isEmpty }
    var who: String { app.isEmpty ? requester ?? "The requester" : "The sandboxed app \(app)" }
    var notOwned: String { app.isEmpty ? "which that connection does not own" : "which is not one of its own providers" }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
}
