import FoundationEssentials

/// Who hears the signals of a server that has an access policy: nobody by broadcast. Each
/// signal about an object goes as a unicast copy to the connection that owns the object and to
/// every subscriber (`subscribe`) the policy lets hear it — as `org.freedesktop.systemd1.Manager`'s
/// `Subscribe` does. A broadcast reaches every connection on the bus, those behind a filtering
/// proxy (xdg-dbus-proxy) included, and no proxy can filter it by content; so the one way not to
/// tell a peer what it may not know is not to broadcast. Without a policy, signals are broadcast
/// as usual.
struct SignalAudience {
    struct Subscriber {
        let caller: Caller
        let watch: Subscription
        /// Signals sent since the last probe went out; a new subscriber is probed at its first.
        var sinceProbe = SignalAudience.signalsPerProbe
        /// When the probe (Peer.Ping) still out was sent; nil: none is out.
        var probeSent: ContinuousClock.Instant?
        /// When it last answered one; nil: never.
        var answeredAt: ContinuousClock.Instant?
    }

    /// A subscriber is probed at the first signal it is sent, then after every `signalsPerProbe`
    /// more; and, when the subscribers are as many as allowed, at the next `Subscribe` refused
    /// (unless it answered within `probePatience`): a connection that subscribes and never reads is
    /// found once it costs something, and nothing runs while nothing happens. One whose probe is
    /// unanswered after `probePatience`, or while `maximumBacklog` signals went to it, is dropped
    /// (`ObjectServer.onSubscriptionDropped`): a reader answers within that, however fast signals come
    /// (a burst of a hundred calls sends hundreds at once; libdbus and GDBus answer Ping as they
    /// read). Its backlog is bounded by `maximumBacklog` signals of a few KiB each (no property as
    /// big as an icon is sent unasked).
    static let signalsPerProbe = 256
    static let probePatience: Duration = .seconds(5)
    static let maximumBacklog = 4096

    /// What to do after one more signal went to `name`.
    enum Verdict { case carryOn, probe, drop }

    mutating func sent(to name: String) -> Verdict {
        guard var subscriber = subscribers[name] else { return .carryOn }
        defer { subscribers[name] = subscriber }
        subscriber.sinceProbe += 1
        // The probe's own timeout (`probePatience`) drops one that does not answer in time.
        if subscriber.probeSent != nil { return subscriber.sinceProbe >= Self.maximumBacklog ? .drop : .carryOn }
        guard subscriber.sinceProbe >= Self.signalsPerProbe else { return .carryOn }
        subscriber.probeSent = .now
        subscriber.sinceProbe = 0
        return .probe
    }

    /// The subscribers (unconfined ones only, or all) to ask whether they still read, each
    /// marked as asked: those with no probe out that have not answered one within `probePatience`.
    /// None when they were asked within `probePatience` (a flood of refused Subscribes scans them once).
    mutating func stale(unconfinedOnly: Bool) -> [Caller] {
        let now = ContinuousClock.now
        if let asked = unconfinedOnly ? unconfinedAskedAt : allAskedAt, now - asked < Self.probePatience { return [] }
        if unconfinedOnly { unconfinedAskedAt = now } else { allAskedAt = now }
        var asked: [Caller] = []
        for name in unconfinedOnly ? Array(unconfined) : Array(subscribers.keys) {
            guard var subscriber = subscribers[name], subscriber.probeSent == nil,
                  subscriber.answeredAt.map({ now - $0 >= Self.probePatience }) ?? true else { continue }
            subscriber.probeSent = now
            subscriber.sinceProbe = 0
            subscribers[name] = subscriber
            asked.append(subscriber.caller)
        }
        return asked
    }

    /// When the unconfined subscribers, or all, were last asked whether they read.
    private var unconfinedAskedAt: ContinuousClock.Instant?
    private var allAskedAt: ContinuousClock.Instant?

    /// The subscriber answered its probe: it reads.
    mutating func answered(_ name: String) {
        subscribers[name]?.probeSent = nil
        subscribers[name]?.answeredAt = .now
    }

    /// Well-known names whose owners may always subscribe (`ObjectServer.reserveSubscriptions`), and
    /// the connection that owns each now (from the bus's `NameOwnerChanged`).
    var reservedNames: Set<String> = []
    private(set) var reservedOwners: [String: String] = [:]

    mutating func nameOwnerChanged(_ name: String, to owner: String) {
        guard reservedNames.contains(name) else { return }
        reservedOwners[name] = owner.isEmpty ? nil : owner
    }

    func ownsReservedName(_ connection: String) -> Bool { reservedOwners.values.contains(connection) }

    /// The connections that called `subscribe`, until they unsubscribe or leave the bus.
    private(set) var subscribers: [String: Subscriber] = [:]
    /// The same, by account (`Caller.account`), so that a signal's recipients are looked up, not
    /// found by a scan of every subscriber, and each account's count is known.
    private(set) var byAccount: [String: Set<String>] = [:]
    /// The subscribers that may hear of every object (`SignalScope.unconfined`).
    private(set) var unconfined: Set<String> = []
    /// Told of each subscriber dropped because it did not read (on the queue).
    var onDropped: ((Caller) -> Void)?

    mutating func add(_ subscriber: Subscriber, scope: SignalScope) {
        let caller = subscriber.caller
        subscribers[caller.name] = subscriber
        byAccount[caller.account, default: []].insert(caller.name)
        if scope == .unconfined { unconfined.insert(caller.name) }
    }

    @discardableResult
    mutating func remove(_ name: String) -> Subscriber? {
        guard let subscriber = subscribers.removeValue(forKey: name) else { return nil }
        let account = subscriber.caller.account
        byAccount[account]?.remove(name)
        if byAccount[account]?.isEmpty == true { byAccount[account] = nil }
        unconfined.remove(name)
        return subscriber
    }

    /// Who may hear of an object of `owner`: the unconfined subscribers, and those of the owner's
    /// own account (the policy has the last word on each).
    func candidates(about owner: Caller?) -> [Caller] {
        var names = unconfined
        if let owner, let sameAccount = byAccount[owner.account] { names.formUnion(sameAccount) }
        return names.compactMap { subscribers[$0]?.caller }
    }
}

/// The bounds of `ObjectServer.subscribe`. The connections that own a reserved name
/// (`ObjectServer.reserveSubscriptions`) subscribe past them.
public struct SubscriptionLimits: Sendable {
    /// Subscribed connections of one account (`Caller.account`).
    public var perAccount: Int
    /// Unconfined subscribed connections together (`SignalScope.unconfined`): each may hear of
    /// every object, so each may be a copy of every signal.
    public var unconfined: Int
    /// Subscribed connections in all.
    public var total: Int

    public init(perAccount: Int, unconfined: Int, total: Int) {
        self.perAccount = perAccount
        self.unconfined = unconfined
        self.total = total
    }
}

/// Why `ObjectServer.subscribe` refused a subscriber: the bound it met.
public enum SubscriptionRefusal: Error, Sendable, Equatable {
    /// Its account has `count` subscribed connections, the limit (`SubscriptionLimits.perAccount`).
    case accountFull(count: Int)
    /// The unconfined subscribers are `count`, their limit (`SubscriptionLimits.unconfined`).
    case unconfinedFull(count: Int)
    /// The subscribers are `count`, the limit (`SubscriptionLimits.total`).
    case full(count: Int)

    /// Those that stopped reading make room within this: the time to try again after (for the
    /// last two).
    public static var patience: Duration { SignalAudience.probePatience }
}

extension ObjectServer {
    /// `caller` hears, from now on, the signals of the objects the access policy lets it hear
    /// (`AccessPolicy.scope(of:)`, then `mayHear` for each), until `unsubscribe` or until it leaves
    /// the bus. Subscribing again changes nothing. Past `limits` it is refused with the bound it met.
    public func subscribe(_ caller: Caller, within limits: SubscriptionLimits) -> SubscriptionRefusal? {
        connection.onQueueSync { () -> SubscriptionRefusal? in
            guard state.audience.subscribers[caller.name] == nil else { return nil }
            let scope = state.callers.policy?.scope(of: caller) ?? .unconfined
            // The desktop's own observers always have room; one connection owns each name.
            if !state.audience.ownsReservedName(caller.name) {
                let mine = state.audience.byAccount[caller.account]?.count ?? 0
                guard mine < limits.perAccount else { return .accountFull(count: mine) }
                let unconfinedFull = scope == .unconfined && state.audience.unconfined.count >= limits.unconfined
                if unconfinedFull || state.audience.subscribers.count >= limits.total {
                    // Those that stopped reading make room once their probes go unanswered.
                    for stale in state.audience.stale(unconfinedOnly: unconfinedFull) { probe(stale) }
                    return unconfinedFull ? .unconfinedFull(count: state.audience.unconfined.count) : .full(count: state.audience.subscribers.count)
                }
            }
            let watch = connection.watchVanishing(of: caller.name) { [weak self] in self?.state.audience.remove(caller.name) }
            state.audience.add(.init(caller: caller, watch: watch), scope: scope)
            return nil
        }
    }

    /// Keeps room among the subscribers for the connections that own `names` (the desktop's own
    /// observers: one connection owns a name at a time, so the room is as many): they subscribe
    /// past every limit. Their owners are followed through `Connection.followNameOwners`, which must run first.
    public func reserveSubscriptions(for names: Set<String>) {
        connection.onQueue {
            self.state.audience.reservedNames = names
            // Every owner change from now on, in the bus's order.
            self.state.reservedOwnersWatch = self.connection.subscribeLocally(Connection.nameOwnerChangedRule) { [weak self] message in
                guard let self, let change = NameOwnerChange(message) else { return }
                self.state.audience.nameOwnerChanged(change.name, to: change.newOwner)
            }
            for name in names {
                // Answered on the queue in the bus's order: no owner change that followed is undone.
                self.connection.callBus("GetNameOwner", [.string(name)]) { [weak self] result in
                    guard let self, case .success(let reply) = result, case .string(let owner)? = try? reply.arguments().first else { return }
                    self.state.audience.nameOwnerChanged(name, to: owner)
                }
            }
        }
    }

    public func unsubscribe(_ name: String) {
        connection.onQueueSync { state.audience.remove(name)?.watch.cancel() }
    }

    /// `handler` hears, on the queue, of each subscriber dropped because it stopped reading: it was
    /// probed (Peer.Ping, which libdbus and GDBus answer as they read) and had not answered within
    /// `SignalAudience.probePatience`, or by the time `SignalAudience.maximumBacklog` more signals
    /// were due, or the probe failed. It may subscribe again.
    public func onSubscriptionDropped(_ handler: @escaping (Caller) -> Void) {
        connection.onQueueSync { state.audience.onDropped = handler }
    }

    /// Counts a signal sent to a subscriber: probes it, or drops it when it does not read.
    private func countSignal(to recipient: Caller) {
        switch state.audience.sent(to: recipient.name) {
        case .carryOn:
            return
        case .drop:
            dropSubscriber(recipient.name)
        case .probe:
            probe(recipient)
        }
    }

    /// Asks a subscriber whether it reads: a Ping, answered within `SignalAudience.probePatience` or dropped.
    private func probe(_ recipient: Caller) {
        guard let probe = try? Message.methodCall(destination: recipient.name, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping") else { return }
        connection.send(call: probe, timeout: SignalAudience.probePatience) { [weak self] result in
            guard let self else { return }
            // Any answer, an error among them (a peer that serves nothing at "/" says
            // UnknownObject), shows it reads; no answer in time, or none there, does not.
            if case .failure(let error) = result, Self.unanswered.contains(DBusError(error).name) {
                dropSubscriber(recipient.name)
            } else {
                state.audience.answered(recipient.name)
            }
        }
    }

    /// The errors that mean a probe was not answered: the peer did not read it in time, or is gone.
    private static let unanswered: Set<String> = [DBusError.Name.noReply, DBusError.Name.disconnected,
                                                  "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"]

    private func dropSubscriber(_ name: String) {
        guard let dropped = state.audience.remove(name) else { return }
        dropped.watch.cancel()
        state.audience.onDropped?(dropped.caller)
    }

    /// The connections that hear a signal about an object owned by `owner` (nil: the server's
    /// own, such as the root), of `interface`; nil when there is no policy (broadcast).
    func recipients(owner: Caller?, interface: String) -> [Caller]? {
        guard let policy = state.callers.policy else { return nil }
        var recipients: [Caller] = []
        if let owner { recipients.append(owner) }
        for subscriber in state.audience.candidates(about: owner) where subscriber.name != owner?.name
        && policy.mayHear(interface: interface, about: owner, subscriber) {
            recipients.append(subscriber)
        }
        return recipients
    }

    /// The owner the policy names for the object at `path` (nil without a policy).
    func owner(of path: ObjectPath) -> Caller? {
        state.callers.policy?.owner(of: path)
    }

    /// Sends a signal about an object to its audience: broadcast without a policy, else a unicast
    /// copy to each recipient. `arguments` gives them as a reader sees them (nil: no reader known);
    /// unless `variesByReader`, they are built once for all. On the queue.
    func emit(path: ObjectPath, interface: String, member: String, owner: Caller?, concerning signalInterface: String,
              variesByReader: Bool = false, _ arguments: (_ reader: Caller?) -> [DBusValue]) throws(DBusError) {
        guard let recipients = recipients(owner: owner, interface: signalInterface) else {
            try connection.emit(path: path, interface: interface, member: member, arguments(nil))
            return
        }
        // Nobody hears it: nothing to build.
        guard !recipients.isEmpty else { return }
        if variesByReader {
            // Marshalled once for each different set of values (readers mostly see the same): building
            // a message (marshalling it, libdbus validating it) costs tens of times a copy. The last
            // recipient of a message takes it, the others a copy addressed to each.
            var messages: [(arguments: [DBusValue], message: Message, remaining: Int)] = []
            var group: [Int] = []
            group.reserveCapacity(recipients.count)
            for recipient in recipients {
                let values = arguments(recipient)
                if let same = messages.firstIndex(where: { $0.arguments == values }) {
                    messages[same].remaining += 1
                    group.append(same)
                } else {
                    // Addressed as it is made when it has one recipient: copies are addressed below.
                    let message = try Message.signal(path: path, interface: interface, member: member, values,
                                                     destination: recipients.count == 1 ? recipient.name : nil)
                    messages.append((values, message, 1))
                    group.append(messages.count - 1)
                }
            }
            for (recipient, index) in zip(recipients, group) {
                messages[index].remaining -= 1
                let message = messages[index].remaining == 0 ? messages[index].message : try messages[index].message.copy()
                if recipients.count > 1 { try message.setDestination(recipient.name) }
                connection.send(message)
                if recipient.name != owner?.name { countSignal(to: recipient) }
            }
            return
        }
        // Marshalled once; each recipient gets a copy addressed to it (the last, the message itself).
        // Addressed as it is made when it has one recipient (most signals: the owner's alone).
        let message = try Message.signal(path: path, interface: interface, member: member, arguments(nil),
                                         destination: recipients.count == 1 ? recipients[0].name : nil)
        for (index, recipient) in recipients.enumerated() {
            let copy = index == recipients.count - 1 ? message : try message.copy()
            if recipients.count > 1 { try copy.setDestination(recipient.name) }
            connection.send(copy)
            if recipient.name != owner?.name { countSignal(to: recipient) }
        }
    }
}
