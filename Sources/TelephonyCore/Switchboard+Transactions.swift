import FoundationEssentials

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
            "Provider \(providers[id]?.name ?? String(describing: id)) failed the \(action.kind.name) action on call \(action.callUUID.lowercased)."))
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
            "Provider \(providers[action.provider]?.name ?? String(describing: action.provider)) did not perform the \(action.kind.name) action on call \(action.callUUID.lowercased) within \(formatSeconds(options.actionTimeout))."))
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
                    "The \(pending.action.kind.name) action on call \(uuid.lowercased) did not happen: the call ended."))
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
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
}
