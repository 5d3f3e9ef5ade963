import Foundation

/// Who hears the signals of a connection that has an access policy: nobody by broadcast. Each
/// signal about an object goes as a unicast copy to the connection that owns the object and to
/// every subscriber (`subscribe`) the policy lets hear it — as `org.freedesktop.systemd1.Manager`'s
/// `Subscribe` does. A broadcast reaches every connection on the bus, sandboxed apps behind
/// xdg-dbus-proxy included, and no proxy can filter it by content; so the one way not to tell an
/// app what it may not know is not to broadcast. Without a policy, signals are broadcast as usual.
struct SignalAudience {
    /// The connections that called `subscribe`, until they unsubscribe or leave the bus.
    var subscribers: [String: (caller: Caller, watch: Subscription)] = [:]
}

extension Connection {
    /// `caller` hears, from now on, the signals of every object the access policy lets it hear
    /// (`AccessPolicy.mayHear`), until `unsubscribe` or until it leaves the bus.
    public func subscribe(_ caller: Caller) {
        onQueueSync {
            guard audience.subscribers[caller.name] == nil else { return }
            let watch = watchVanishing(of: caller.name) { [weak self] in self?.audience.subscribers[caller.name] = nil }
            audience.subscribers[caller.name] = (caller, watch)
        }
    }

    public func unsubscribe(_ name: String) {
        onQueueSync { audience.subscribers.removeValue(forKey: name)?.watch.cancel() }
    }

    /// The connections that hear a signal about an object owned by `owner` (nil: the service's
    /// own, such as the root), of `interface`; nil when there is no policy (broadcast).
    func recipients(owner: Caller?, interface: String) -> [Caller]? {
        guard let policy = callers.policy else { return nil }
        var recipients: [Caller] = []
        if let owner { recipients.append(owner) }
        for (name, subscriber) in audience.subscribers where name != owner?.name
        && policy.mayHear(interface: interface, about: owner, subscriber.caller) {
            recipients.append(subscriber.caller)
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
        }
    }
}
