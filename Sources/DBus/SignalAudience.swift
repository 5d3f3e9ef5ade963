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
        /// Signals sent since the last probe went out.
        var sinceProbe = 0
        /// When the probe (Peer.Ping) still out was sent; nil: none is out.
        var probeSent: ContinuousClock.Instant?
    }

    /// A subscriber is probed after this many signals. One whose probe is unanswered is dropped
    /// (`Connection.onSubscriptionDropped`) once the probe is `probePatience` old when more are
    /// due, or `maximumBacklog` signals have gone since it was sent: a reader that reads answers
    /// within that, however fast signals come (a burst of a hundred calls sends hundreds at once).
    /// Its backlog is bounded by `maximumBacklog` signals of a few KiB each (no property as big as
    /// an icon is sent unasked).
    static let signalsPerProbe = 256
    static let probePatience: Duration = .seconds(5)
    static let maximumBacklog = 4096

    /// What to do after one more signal went to `name`.
    enum Verdict { case carryOn, probe, drop }

    mutating func sent(to name: String) -> Verdict {
        guard var subscriber = subscribers[name] else { return .carryOn }
        defer { subscribers[name] = subscriber }
        subscriber.sinceProbe += 1
        guard subscriber.sinceProbe >= Self.signalsPerProbe else { return .carryOn }
        if let sent = subscriber.probeSent {
            let overdue = subscriber.sinceProbe >= Self.maximumBacklog || ContinuousClock.now - sent >= Self.probePatience
            return overdue ? .drop : .carryOn
        }
        subscriber.probeSent = .now
        subscriber.sinceProbe = 0
        return .probe
    }

    /// The subscriber answered its probe: it reads.
    mutating func answered(_ name: String) {
        subscribers[name]?.probeSent = nil
    }

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

/// The bounds of `Connection.subscribe`.
public struct SubscriptionLimits: Sendable {
    /// Subscribed connections of one account (a sandboxed app, a host process).
    public var perAccount: Int
    /// Subscribed connections in all.
    public var total: Int

    public init(perAccount: Int, total: Int) {
        self.perAccount = perAccount
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
            let mine = audience.byAccount[caller.account]?.count ?? 0
            guard mine < limits.perAccount else {
                return "\(caller.identity.isSandboxed ? "the app \(caller.identity)" : "this process") already has \(mine) subscribed connections; the limit is \(limits.perAccount)"
            }
            guard audience.subscribers.count < limits.total else {
                return "the service has \(audience.subscribers.count) subscribed connections, its limit"
            }
            let watch = watchVanishing(of: caller.name) { [weak self] in self?.audience.remove(caller.name) }
            audience.add(.init(caller: caller, watch: watch))
            return nil
        }
    }

    public func unsubscribe(_ name: String) {
        onQueueSync { audience.remove(name)?.watch.cancel() }
    }

    /// `handler` hears, on the queue, of each subscriber dropped because it stopped reading: it was
    /// probed (Peer.Ping, which libdbus and GDBus answer as they read) and had not answered by the
    /// time `SignalAudience.signalsPerProbe` more signals were due, or the probe failed. It may
    /// subscribe again.
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
            guard let probe = try? Message.methodCall(destination: recipient.name, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping") else { return }
            send(call: probe, timeout: .seconds(25)) { [weak self] result in
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
        if variesByReader {
            for recipient in recipients {
                try emit(path: path, interface: interface, member: member, arguments(recipient), destination: recipient.name)
                if recipient.name != owner?.name { countSignal(to: recipient) }
            }
            return
        }
        // Marshalled once; each recipient gets a copy addressed to it.
        let message = try Message.signal(path: path, interface: interface, member: member)
        try message.append(arguments(nil))
        for recipient in recipients {
            let copy = try message.copy()
            try copy.setDestination(recipient.name)
            send(copy)
            if recipient.name != owner?.name { countSignal(to: recipient) }
        }
    }
}
