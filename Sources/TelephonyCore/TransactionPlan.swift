import FoundationEssentials

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
            throw .unentitled("\(entitlement.who) may not act on call \(uuid.lowercased): it is not one of its own calls.")
        }
        guard var call = found else { throw .unknownCallUUID(uuid) }
        if !entitlement.allows(call.provider) {
            throw .unentitled("\(entitlement.who) may not act on call \(uuid.lowercased): it belongs to provider \(call.providerName) (\(call.provider)), \(entitlement.notOwned).")
        }
        let what = "Cannot \(request.kind.name) call \(uuid.lowercased)"
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
            plan.groupChecks.append((call.provider, "answering call \(uuid.lowercased)"))
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
            throw .invalidAction("Cannot start call \(uuid.lowercased): provider \(provider.name) does not support \(handle.type.rawValue) handles (only \(config.supportedHandleTypeList)).")
        }
        guard !video || config.supportsVideo else {
            throw .invalidAction("Cannot start video call \(uuid.lowercased): provider \(provider.name) does not support video.")
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
        plan.groupChecks.append((provider.id, "starting call \(uuid.lowercased)"))
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
