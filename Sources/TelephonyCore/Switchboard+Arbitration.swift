import FoundationEssentials

/// Arbitration between calls and providers: holding or ending the other calls
/// for a new one, call groups, and resuming calls the system held.
extension Switchboard {
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
            plan.groupChecks.append((call.provider, "ungrouping call \(call.uuid.lowercased)"))
            return
        }
        guard otherUUID != call.uuid else { throw .invalidAction("\(what): a call cannot be grouped with itself.") }
        guard var target = simulatedCall(otherUUID, in: plan) else { throw .unknownCallUUID(otherUUID) }
        guard !plan.ending.contains(otherUUID) else {
            throw .invalidAction("\(what): call \(otherUUID.lowercased) is ended by an earlier action of this transaction.")
        }
        guard target.provider == call.provider else {
            // Not named: the requester may not be allowed to know whose it is.
            throw .invalidAction("\(what): call \(otherUUID.lowercased) belongs to another provider.")
        }
        guard call.supportsGrouping else { throw .invalidAction("\(what): it does not support grouping.") }
        guard target.supportsGrouping else {
            throw .invalidAction("\(what): call \(otherUUID.lowercased) does not support grouping.")
        }
        guard target.countsAsGroup else {
            throw .invalidAction("\(what): call \(otherUUID.lowercased) is \(target.state.rawValue); only a call that is not ringing can be grouped.")
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
