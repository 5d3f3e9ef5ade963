import DBus
import Dispatch
import FoundationEssentials
import MonkeyCallAPI
import Synchronization

/// Told of each change to any call (CallKit's `CXCallObserverDelegate`).
public protocol CXCallObserverDelegate: AnyObject {
    func callObserver(_ callObserver: CXCallObserver, callChanged call: CXCall)
}

/// The calls of every provider, kept up to date from the service's objects
/// (CallKit's `CXCallObserver`). When the service goes away its calls are
/// reported as ended.
public final class CXCallObserver: Sendable {
    let serviceConnection: ServiceConnection?
    /// What the app reads and who it told to hear of changes: set from any thread.
    private let published = Mutex(Published())
    /// Follows the service's objects, on the connection's queue.
    private let tracker: CallTracker?

    private struct Published {
        var calls: [CXCall] = []
        weak var delegate: (any CXCallObserverDelegate)?
        var queue = DispatchQueue(label: "MonkeyCallKit.observer.delegate")
    }

    /// Observes the calls on the session bus.
    public convenience init() {
        self.init(serviceConnection: try? ServiceConnection.shared(address: nil))
    }

    /// Observes the calls on the bus at `busAddress`.
    public convenience init(busAddress: String) {
        self.init(serviceConnection: try? ServiceConnection.shared(address: busAddress))
    }

    init(serviceConnection: ServiceConnection?) {
        self.serviceConnection = serviceConnection
        tracker = serviceConnection.map(CallTracker.init)
        tracker?.start(publishingTo: self)
    }

    deinit { tracker?.stop() }

    /// The live calls, in the order they appeared; an ended call is reported once and leaves the list.
    public var calls: [CXCall] { published.withLock { $0.calls } }

    /// Sets the delegate and the queue `callObserver(_:callChanged:)` runs on (nil: a private serial queue).
    public func setDelegate(_ delegate: (any CXCallObserverDelegate)?, queue: DispatchQueue?) {
        let target = UncheckedSendable(delegate)
        published.withLock {
            $0.delegate = target.value
            $0.queue = queue ?? DispatchQueue(label: "MonkeyCallKit.observer.delegate")
        }
    }

    /// The calls are now `calls`; the delegate hears of `changed`.
    fileprivate func publish(_ calls: [CXCall], changed: CXCall?) {
        let (delegate, queue) = published.withLock { published in
            published.calls = calls
            return (UncheckedSendable(published.delegate), published.queue)
        }
        guard let changed, delegate.value != nil else { return }
        queue.async { delegate.value?.callObserver(self, callChanged: changed) }
    }
}

/// The service's call objects as an observer follows them: on the service connection's queue,
/// whose executor it shares.
private actor CallTracker {
    private let serviceConnection: ServiceConnection
    private weak var observer: CXCallObserver?
    /// Each call object's fields, as last read.
    private var records: [ObjectPath: Telephony1.CallRecord] = [:]
    private var known: [UUID: CXCall] = [:]
    private var order: [UUID] = []
    private var subscriptions: [Subscription] = []
    private var refreshing = 0
    private var heldBack: [Message] = []

    nonisolated var unownedExecutor: UnownedSerialExecutor { serviceConnection.executor.asUnownedSerialExecutor() }

    init(serviceConnection: ServiceConnection) {
        self.serviceConnection = serviceConnection
    }

    nonisolated func start(publishingTo observer: CXCallObserver) {
        let serviceConnection = self.serviceConnection
        Task(executorPreference: serviceConnection.tasks) { [weak self, weak observer] in
            await serviceConnection.ready()
            let callRoot = Telephony1.callRoot
            let changes = MatchRule(sender: Telephony1.busName, pathNamespace: callRoot,
                                    interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            let objects = MatchRule(sender: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager")
            // Signals are handled on the connection's queue, the tracker's executor.
            let handler: (Message) -> Void = { [weak self] message in self?.assumeIsolated { $0.handle(message) } }
            var subscriptions: [Subscription] = []
            if let subscription = try? await serviceConnection.connection.subscribe(changes, handler: handler) {
                subscriptions.append(subscription)
            }
            if let subscription = try? await serviceConnection.connection.subscribe(objects, handler: handler) {
                subscriptions.append(subscription)
            }
            guard let self, let observer else { return }
            serviceConnection.addOwnerListener(self) { [weak self] _, new in
                self?.assumeIsolated { tracker in
                    tracker.serviceGone()
                    if !new.isEmpty { tracker.refresh() }
                }
            }
            await self.began(publishingTo: observer, subscriptions)
        }
    }

    private func began(publishingTo observer: CXCallObserver, _ subscriptions: [Subscription]) {
        self.observer = observer
        self.subscriptions = subscriptions
        refresh()
    }

    nonisolated func stop() { serviceConnection.removeOwnerListener(self) }

    /// Reads every call from the ObjectManager. Signals that come meanwhile
    /// are held back and applied on top of the snapshot, in order.
    private func refresh() {
        refreshing += 1
        let serviceConnection = self.serviceConnection
        Task(executorPreference: serviceConnection.tasks) { [weak self] in
            // The service sends its signals only to subscribers (and each app its own objects'):
            // subscribed again whenever the service (re)starts, before the snapshot.
            _ = try? await serviceConnection.call(Telephony1.rootPath, Telephony1.Manager.interface, Telephony1.Manager.subscribe.name)
            let reply = try? await serviceConnection.call(Telephony1.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
            await self?.applySnapshot(reply)
        }
    }

    private func applySnapshot(_ reply: [DBusValue]?) {
        refreshing -= 1
        if case .dictionary(_, _, let entries)? = reply?.first {
            var seen = Set<UUID>()
            for entry in entries {
                guard case .objectPath(let path) = entry.key, let call = Self.callProperties(entry.value) else { continue }
                let record = Telephony1.CallRecord(properties: call)
                records[path] = record
                if let uuid = CXCall(record: record)?.uuid { seen.insert(uuid) }
                update(path)
            }
            for uuid in order where !seen.contains(uuid) {
                records = records.filter { CXCall(record: $0.value)?.uuid != uuid }
                remove(uuid)
            }
        }
        guard refreshing == 0 else { return }
        let held = heldBack
        heldBack = []
        for message in held { handle(message) }
    }

    private static func callProperties(_ interfaces: DBusValue) -> [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = interfaces else { return nil }
        for entry in entries where entry.key == .string(Telephony1.Call.interface) { return entry.value.vardict }
        return nil
    }

    /// A signal about the calls.
    private func handle(_ message: Message) {
        if refreshing > 0 {
            heldBack.append(message)
            return
        }
        if message.interface == "org.freedesktop.DBus.Properties" { propertiesChanged(message) } else { objectsChanged(message) }
    }

    private func propertiesChanged(_ message: Message) {
        guard let path = message.path, let args = try? message.arguments(), args.count >= 2,
              args[0] == .string(Telephony1.Call.interface), let changed = args[1].vardict,
              records[path] != nil else { return }
        records[path]?.apply(changed)
        update(path)
    }

    private func objectsChanged(_ message: Message) {
        guard let args = try? message.arguments(), case .objectPath(let path)? = args.first, args.count == 2 else { return }
        switch message.member {
        case "InterfacesAdded":
            guard let call = Self.callProperties(args[1]) else { return }
            records[path] = Telephony1.CallRecord(properties: call)
            update(path)
        case "InterfacesRemoved":
            guard let call = records.removeValue(forKey: path).flatMap(CXCall.init(record:)) else { return }
            remove(call.uuid)
        default:
            break
        }
    }

    /// Publishes the call at `path` when it changed.
    private func update(_ path: ObjectPath) {
        guard let record = records[path], let call = CXCall(record: record) else { return }
        guard known[call.uuid] != call else { return }
        if call.hasEnded {
            // An ended call leaves the list as it is reported.
            records[path] = nil
            known[call.uuid] = nil
            order.removeAll { $0 == call.uuid }
            publish(call)
            return
        }
        if known[call.uuid] == nil { order.append(call.uuid) }
        known[call.uuid] = call
        publish(call)
    }

    /// The call is gone; it is reported ended if it was not yet.
    private func remove(_ uuid: UUID) {
        guard let call = known.removeValue(forKey: uuid) else { return }
        order.removeAll { $0 == uuid }
        publish(call.hasEnded ? nil : call.ended())
    }

    private func serviceGone() {
        records = [:]
        for uuid in order { remove(uuid) }
    }

    private func publish(_ changed: CXCall?) {
        observer?.publish(order.compactMap { known[$0] }, changed: changed)
    }
}
