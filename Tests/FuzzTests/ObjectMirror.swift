import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI

/// What an observer believes the service holds, built only from the signals
/// it hears: InterfacesAdded, InterfacesRemoved and the calls' PropertiesChanged.
///
/// The daemon numbers what it sends, so the mirror can also say what it held
/// just before a given reply (`state(before:)`): signals that come after
/// that reply, from a timeout say, do not count against it.
final class ObjectMirror: @unchecked Sendable {
    struct State {
        var calls: [ObjectPath: [String: DBusValue]] = [:]
        var providers: Set<ObjectPath> = []
        /// What each call path heard, for failure messages.
        var heard: [ObjectPath: [String]] = [:]

        mutating func apply(_ change: Change) {
            switch change {
            case .added(let path, let call, let isProvider):
                if let call {
                    calls[path] = call
                    heard[path, default: []].append("added \(call["State"].map(\.description) ?? "")")
                }
                if isProvider { providers.insert(path) }
            case .removed(let path):
                calls[path] = nil
                providers.remove(path)
                heard[path, default: []].append("removed")
            case .changed(let path, let properties):
                guard calls[path] != nil else { return }
                calls[path]?.merge(properties) { $1 }
                heard[path, default: []].append("changed \(properties["State"].map(\.description) ?? "")")
            }
        }
    }

    enum Change {
        case added(ObjectPath, call: [String: DBusValue]?, isProvider: Bool)
        case removed(ObjectPath)
        case changed(ObjectPath, [String: DBusValue])
    }

    private let lock = NSLock()
    /// Everything heard so far.
    private var live = State()
    /// Everything heard before the last reply asked about, and what came after it.
    private var settled = State()
    private var pending: [(serial: UInt32, change: Change)] = []
    private var changeCount = 0
    /// A number for every change, counting from 0, for waiting on changes.
    let changes = EventBuffer<Int>()
    private var subscriptions: [Subscription] = []

    init(_ connection: Connection) async throws {
        let objectManager = "org.freedesktop.DBus.ObjectManager"
        subscriptions.append(try await connection.subscribe(MatchRule(interface: objectManager, member: "InterfacesAdded")) { [weak self] message in
            guard let arguments = try? message.arguments(), arguments.count == 2, case .objectPath(let path) = arguments[0],
                  case .dictionary(_, _, let interfaces) = arguments[1] else { return }
            let call = interfaces.first { $0.key == .string(Telephony1.Call.interface) }.map { $0.value.vardict ?? [:] }
            let isProvider = interfaces.contains { $0.key == .string(Telephony1.Provider.interface) }
            self?.record(message, .added(path, call: call, isProvider: isProvider))
        })
        subscriptions.append(try await connection.subscribe(MatchRule(interface: objectManager, member: "InterfacesRemoved")) { [weak self] message in
            guard case .objectPath(let path)? = try? message.arguments().first else { return }
            self?.record(message, .removed(path))
        })
        subscriptions.append(try await connection.subscribe(MatchRule(pathNamespace: Telephony1.rootPath, interface: "org.freedesktop.DBus.Properties",
                                                                       member: "PropertiesChanged")) { [weak self] message in
            guard let path = message.path, let arguments = try? message.arguments(), arguments.count == 3,
                  arguments[0] == .string(Telephony1.Call.interface), let changed = arguments[1].vardict else { return }
            self?.record(message, .changed(path, changed))
        })
    }

    private func record(_ message: Message, _ change: Change) {
        let number = lock.withLock {
            live.apply(change)
            pending.append((message.serial, change))
            defer { changeCount += 1 }
            return changeCount
        }
        changes.append(number)
    }

    /// Everything heard so far.
    var calls: [ObjectPath: [String: DBusValue]] { lock.withLock { live.calls } }
    var providers: Set<ObjectPath> { lock.withLock { live.providers } }

    /// What was heard from the daemon before its message numbered `serial`
    /// (a reply). Asked with ever larger serials, as the daemon sends them.
    func state(before serial: UInt32) -> State {
        lock.withLock {
            let earlier = pending.prefix { $0.serial < serial }
            for event in earlier { settled.apply(event.change) }
            pending.removeFirst(earlier.count)
            return settled
        }
    }

    /// Waits, change by change, until `condition` holds; false at the deadline.
    func waitUntil(timeout: Duration, _ condition: (ObjectMirror) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            let left = deadline - .now
            guard left > .zero, await changes.next(timeout: left) != nil else { return condition(self) }
        }
        return true
    }

    /// Waits for a change after this moment; false at the deadline.
    func nextChange(timeout: Duration) async -> Bool {
        let mark = lock.withLock { changeCount }
        return await changes.next(timeout: timeout, where: { $0 >= mark }) != nil
    }
}

/// One `GetManagedObjects` reply: the service's own account, taken at one instant.
struct ManagedObjects {
    var calls: [ObjectPath: [String: DBusValue]] = [:]
    var providers: [ObjectPath: [String: DBusValue]] = [:]
    /// The reply's number among the daemon's messages.
    var serial: UInt32 = 0

    init(_ reply: [DBusValue]) {
        guard case .dictionary(_, _, let objects)? = reply.first else { return }
        for object in objects {
            guard case .objectPath(let path) = object.key, case .dictionary(_, _, let interfaces) = object.value else { continue }
            for interface in interfaces {
                if interface.key == .string(Telephony1.Call.interface) { calls[path] = interface.value.vardict ?? [:] }
                if interface.key == .string(Telephony1.Provider.interface) { providers[path] = interface.value.vardict ?? [:] }
            }
        }
    }

    static func fetch(_ connection: Connection) async throws -> ManagedObjects {
        let message = try Message.methodCall(destination: Telephony1.busName, path: Telephony1.rootPath, interface: "org.freedesktop.DBus.ObjectManager",
                                             member: "GetManagedObjects")
        let reply = try await connection.send(call: message, timeout: FuzzedDaemon.replyDeadline)
        var objects = ManagedObjects(try reply.arguments())
        objects.serial = reply.serial
        return objects
    }
}
