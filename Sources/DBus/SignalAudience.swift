import FoundationEssentials

/// Who hears the signals of a connection that has an access policy: nobody by broadcast. Each
/// signal about an object goes as a unicast copy to the connection that owns the object and to
/// every subscriber (`subscribe`) the policy lets hear it — as `org.freedesktop.systemd1.Manager`'s
/// `Subscribe` does. A broadcast reaches every connection on the bus, sandboxed apps behind
/// xdg-dbus-proxy included, and no proxy can filter it by content; so the one way not to tell an
/// app what it may not know is not to broadcast. Without a policy, signals are broadcast as usual.
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
    /// (`Connection.onSubscriptionDropped`): a reader answers within that, however fast signals come
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

    /// The subscribers (of host processes only, or all) to ask whether they still read, each
    /// marked as asked: those with no probe out that have not answered one within `probePatience`.
    /// None when they were asked within `probePatience` (a flood of refused Subscribes scans them once).
    mutating func stale(hostsOnly: Bool) -> [Caller] {
        let now = ContinuousClock.now
        if let asked = hostsOnly ? hostsAskedAt : allAskedAt, now - asked < Self.probePatience { return [] }
        if hostsOnly { hostsAskedAt = now } else { allAskedAt = now }
        var asked: [Caller] = []
        for name in hostsOnly ? Array(hosts) : Array(subscribers.keys) {
            guard var subscriber = subscribers[name], subscriber.probeSent == nil,
                  subscriber.answeredAt.map({ now - $0 >= Self.probePatience }) ?? true else { continue }
            subscriber.probeSent = now
            subscriber.sinceProbe = 0
            subscribers[name] = subscriber
            asked.append(subscriber.caller)
        }
        return asked
    }

    /// When the host subscribers, or all, were last asked whether they read.
    private var hostsAskedAt: ContinuousClock.Instant?
    private var allAskedAt: ContinuousClock.Instant?

    /// The subscriber answered its probe: it reads.
    mutating func answered(_ name: String) {
        subscribers[name]?.probeSent = nil
        subscribers[name]?.answeredAt = .now
    }

    /// Well-known names whose owners may always subscribe (`Connection.reserveSubscriptions`), and
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
    /// The same, by account (`Caller.account`: a sandboxed app, a host process), so that a signal's
    /// recipients are looked up, not found by a scan of every subscriber, and each account's count is known.
    private(set) var byAccount: [String: Set<String>] = [:]
    /// Host subscribers: they hear of every object.
    private(set) var hosts: Set<String> = []
    /// Told of each subscriber dropped because it did not read (on the queue).
    var onDropped: ((Caller) -> Void)?

    mutating func add(_ subscriber: Subscriber) {
        let caller = subscriber.caller
        subscribers[caller.name] = subscriber
        byAccount[caller.account, default: []].insert(caller.name)
        if !caller.identity.isSandboxed { hosts.insert(caller.name) }
    }

    @discardableResult
    mutating func remove(_ name: String) -> Subscriber? {
        guard let subscriber = subscribers.removeValue(forKey: name) else { return nil }
        let account = subscriber.caller.account
        byAccount[account]?.remove(name)
        if byAccount[account]?.isEmpty == true { byAccount[account] = nil }
        hosts.remove(name)
        return subscriber
    }

    /// Who may hear of an object of `owner`: host subscribers, and the subscribers of the owner's own
    /// app when it is sandboxed (the policy has the last word on each).
    func candidates(about owner: Caller?) -> [Caller] {
        var names = hosts
        if let owner, owner.identity.isSandboxed, let sameApp = byAccount[owner.account] { names.formUnion(sameApp) }
        return names.compactMap { subscribers[$0]?.caller }
    }
}

/// The bounds of `Connection.subscribe`. The connections that own a reserved name
/// (`Connection.reserveSubscriptions`) subscribe past them.
public struct SubscriptionLimits: Sendable {
    /// Subscribed connections of one account (a sandboxed app, a host process).
    public var perAccount: Int
    /// Subscribed connections of host processes together: each hears of every object, so each is a
    /// copy of every signal. The user's own processes are one user's however many there are.
    public var hosts: Int
    /// Subscribed connections in all.
    public var total: Int

    public init(perAccount: Int, hosts: Int, total: Int) {
        self.perAccount = perAccount
        self.hosts = hosts
        self.total = total
    }
}

extension Connection {
    /// `caller` hears, from now on, the signals of every object the access policy lets it hear
    /// (`AccessPolicy.mayHear`), until `unsubscribe` or until it leaves the bus. Subscribing again
    /// changes nothing. Past `limits` it is refused with a message that says which bound it met.
    public func subscribe(_ caller: Caller, within limits: SubscriptionLimits) -> String? {
        onQueueSync { () -> String? in
            guard audience.subscribers[caller.name] == nil else { return nil }
            // The desktop's own observers always have room; one connection owns each name.
            if !audience.ownsReservedName(caller.name) {
                let mine = audience.byAccount[caller.account]?.count ?? 0
                guard mine < limits.perAccount else {
                    return "\(caller.identity.isSandboxed ? "the app \(caller.identity)" : "this process") already has \(mine) subscribed connections; the limit is \(limits.perAccount)"
                }
                let hostsFull = !caller.identity.isSandboxed && audience.hosts.count >= limits.hosts
                if hostsFull || audience.subscribers.count >= limits.total {
                    // Those that stopped reading make room once their probes go unanswered.
                    for stale in audience.stale(hostsOnly: hostsFull) { probe(stale) }
                    let full = hostsFull ? "host processes have \(audience.hosts.count) subscribed connections, their limit"
                        : "the service has \(audience.subscribers.count) subscribed connections, its limit"
                    return "\(full); those that do not read are dropped within \(SignalAudience.probePatience.components.seconds) s: try again then"
                }
            }
            let watch = watchVanishing(of: caller.name) { [weak self] in self?.audience.remove(caller.name) }
            audience.add(.init(caller: caller, watch: watch))
            return nil
        }
    }

    /// Keeps room among the subscribers for the connections that own `names` (the desktop's own
    /// observers: one connection owns a name at a time, so the room is as many): they subscribe
    /// past every limit. Their owners are followed through `followNameOwners`, which must run first.
    public func reserveSubscriptions(for names: Set<String>) {
        onQueue {
            self.audience.reservedNames = names
            for name in names {
                // Answered on the queue in the bus's order: no owner change that followed is undone.
                self.callBus("GetNameOwner", [.string(name)]) { [weak self] result in
                    guard let self, case .success(let reply) = result, case .string(let owner)? = try? reply.arguments().first else { return }
                    self.audience.nameOwnerChanged(name, to: owner)
                }
            }
        }
    }

    public func unsubscribe(_ name: String) {
        onQueueSync { audience.remove(name)?.watch.cancel() }
    }

    /// `handler` hears, on the queue, of each subscriber dropped because it stopped reading: it was
    /// probed (Peer.Ping, which libdbus and GDBus answer as they read) and had not answered within
    /// `SignalAudience.probePatience`, or by the time `SignalAudience.maximumBacklog` more signals
    /// were due, or the probe failed. It may subscribe again.
    public func onSubscriptionDropped(_ handler: @escaping (Caller) -> Void) {
        onQueueSync { audience.onDropped = handler }
    }

    /// Counts a signal sent to a subscriber: probes it, or drops it when it does not read.
    private func countSignal(to recipient: Caller) {
        switch audience.sent(to: recipient.name) {
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
        send(call: probe, timeout: SignalAudience.probePatience) { [weak self] result in
            guard let self else { return }
            // Any answer, an error among them (a peer that serves nothing at "/" says
            // UnknownObject), shows it reads; no answer in time, or none there, does not.
            if case .failure(let error) = result, Self.unanswered.contains(DBusError(error).name) {
                dropSubscriber(recipient.name)
            } else {
                audience.answered(recipient.name)
            }
        }
    }

    /// The errors that mean a probe was not answered: the peer did not read it in time, or is gone.
    private static let unanswered: Set<String> = [DBusError.Name.noReply, DBusError.Name.disconnected,
                                                  "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"]

    private func dropSubscriber(_ name: String) {
        guard let dropped = audience.remove(name) else { return }
        dropped.watch.cancel()
        audience.onDropped?(dropped.caller)
    }

    /// The connections that hear a signal about an object owned by `owner` (nil: the service's
    /// own, such as the root), of `interface`; nil when there is no policy (broadcast).
    func recipients(owner: Caller?, interface: String) -> [Caller]? {
        guard let policy = callers.policy else { return nil }
        var recipients: [Caller] = []
        if let owner { recipients.append(owner) }
        for subscriber in audience.candidates(about: owner) where subscriber.name != owner?.name
        && policy.mayHear(interface: interface, about: owner, subscriber) {
            recipients.append(subscriber)
        }
        return recipients
    }

    /// The owner the policy names for the object at `path` (nil without a policy).
    func owner(of path: ObjectPath) -> Caller? {
        callers.policy?.owner(of: path)
    }

    /// Sends a signal about an object to its audience: broadcast without a policy, else a unicast
    /// copy to each recipient. `arguments` gives them as a reader sees them (nil: no reader known);
    /// unless `variesByReader`, they are built once for all. On the queue.
    func emit(path: ObjectPath, interface: String, member: String, owner: Caller?, concerning signalInterface: String,
              variesByReader: Bool = false, _ arguments: (_ reader: Caller?) -> [DBusValue]) throws(DBusError) {
        guard let recipients = recipients(owner: owner, interface: signalInterface) else {
            try emit(path: path, interface: interface, member: member, arguments(nil))
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
                    let message = try Message.signal(path: path, interface: interface, member: member)
                    try message.append(values)
                    messages.append((values, message, 1))
                    group.append(messages.count - 1)
                }
            }
            for (recipient, index) in zip(recipients, group) {
                messages[index].remaining -= 1
                let message = messages[index].remaining == 0 ? messages[index].message : try messages[index].message.copy()
                try message.setDestination(recipient.name)
                send(message)
                if recipient.name != owner?.name { countSignal(to: recipient) }
            }
            return
        }
        // Marshalled once; each recipient gets a copy addressed to it (the last, the message itself).
        let message = try Message.signal(path: path, interface: interface, member: member)
        try message.append(arguments(nil))
        for (index, recipient) in recipients.enumerated() {
            let copy = index == recipients.count - 1 ? message : try message.copy()
            try copy.setDestination(recipient.name)
            send(copy)
            if recipient.name != owner?.name { countSignal(to: recipient) }
        }
    }
}
