/// Calls to the message bus itself (`org.freedesktop.DBus`).
extension Connection {
    public static let busName = "org.freedesktop.DBus"
    static let busPath: ObjectPath = "/org/freedesktop/DBus"

    private func callBus(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await call(destination: Connection.busName, path: Connection.busPath, interface: Connection.busName, member: member, arguments)
    }

    /// A call to the bus itself with the reply handed to `deliver` on the queue (an error reply is
    /// a failure), for work that must not wait for a thread of the cooperative pool.
    func callBus(_ member: String, _ arguments: [DBusValue], then deliver: @escaping @Sendable (Result<Message, Error>) -> Void) {
        do {
            send(call: try Message.methodCall(destination: Connection.busName, path: Connection.busPath, interface: Connection.busName,
                                              member: member, arguments), onReply: deliver)
        } catch {
            deliver(.failure(error))
        }
    }

    public enum RequestNameResult: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Asks for a well-known name without queueing. `replace` takes it from an
    /// owner that allows replacement; `allowReplacement` lets a later `replace` take it from us.
    public func requestName(_ name: String, replace: Bool = false, allowReplacement: Bool = true) async throws -> RequestNameResult {
        try Names.validateBusName(name)
        let flags: UInt32 = (allowReplacement ? 0x1 : 0) | (replace ? 0x2 : 0) | 0x4
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags)])
        guard case .uint32(let code)? = reply.first, let result = RequestNameResult(rawValue: code) else {
            throw DBusError.failed("unexpected reply to RequestName")
        }
        return result
    }

    public func releaseName(_ name: String) async throws {
        try Names.validateBusName(name)
        _ = try await callBus("ReleaseName", [.string(name)])
    }

    /// The unique name that owns `name`, or nil when nobody does.
    public func nameOwner(_ name: String) async throws -> String? {
        do {
            let reply = try await callBus("GetNameOwner", [.string(name)])
            guard case .string(let owner)? = reply.first else { return nil }
            return owner
        } catch let error as DBusError where error.name == DBusError.Name.nameHasNoOwner {
            return nil
        }
    }

    /// The names on the bus now, unique and well-known.
    public func listNames() async throws -> [String] {
        let reply = try await callBus("ListNames", [])
        return try [String](dbusValue: reply.first ?? .array(element: "s", []))
    }

    public func addMatch(_ rule: MatchRule) async throws {
        _ = try await callBus("AddMatch", [.string(rule.description)])
    }

    public func removeMatch(_ rule: MatchRule) async throws {
        _ = try await callBus("RemoveMatch", [.string(rule.description)])
    }

    // MARK: Names that change owner

    /// Every `NameOwnerChanged` the bus sends.
    static let nameOwnerChangedRule = MatchRule(sender: Connection.busName, path: Connection.busPath, interface: Connection.busName,
                                                member: "NameOwnerChanged")

    /// Starts following `NameOwnerChanged`, so that `watchVanishing` sees every
    /// connection that leaves. Call once, before the first watch is needed.
    public func followNameOwners() async throws {
        let subscription = try await subscribe(Self.nameOwnerChangedRule) { [weak self] message in
            guard let self, let change = NameOwnerChange(message), change.newOwner.isEmpty else { return }
            for handler in self.state.nameWatches.take(change.name) { handler() }
        }
        onQueue { self.state.nameWatches.subscription = subscription }
    }

    /// Runs `handler` on the queue for every name that changes owner. Requires `followNameOwners()`,
    /// whose match rule already brings the signals here: this adds no rule of its own.
    public func watchNameOwnerChanges(_ handler: @escaping (NameOwnerChange) -> Void) async throws -> Subscription {
        try await subscribe(Self.nameOwnerChangedRule, local: true) { message in
            if let change = NameOwnerChange(message) { handler(change) }
        }
    }

    /// Runs `handler` on the queue when the connection `uniqueName` leaves the
    /// bus. Requires `followNameOwners()`. Cancel (or release) the token to stop.
    public func watchVanishing(of uniqueName: String, _ handler: @escaping () -> Void) -> Subscription {
        let id = UUID()
        onQueue { self.state.nameWatches.add(uniqueName, id: id, handler) }
        return Subscription { [weak self] in
            guard let self else { return }
            self.onQueue { self.state.nameWatches.remove(uniqueName, id: id) }
        }
    }
}

import FoundationEssentials

/// The handlers waiting for names to leave the bus; lives on the connection's queue.
struct NameWatches {
    var subscription: Subscription?
    private var handlers: [String: [UUID: () -> Void]] = [:]

    mutating func add(_ name: String, id: UUID, _ handler: @escaping () -> Void) {
        handlers[name, default: [:]][id] = handler
    }

    mutating func remove(_ name: String, id: UUID) {
        handlers[name]?[id] = nil
        if handlers[name]?.isEmpty == true { handlers[name] = nil }
    }

    /// Removes and returns the handlers waiting for `name`, to be run by the caller.
    mutating func take(_ name: String) -> [() -> Void] {
        guard let waiting = handlers.removeValue(forKey: name) else { return [] }
        return Array(waiting.values)
    }
}

/// A `NameOwnerChanged` signal: `name` passed from `oldOwner` to `newOwner` (empty: nobody).
public struct NameOwnerChange: Sendable {
    public let name: String
    public let oldOwner: String
    public let newOwner: String

    init?(_ message: Message) {
        guard let arguments = try? message.arguments(), arguments.count == 3, case .string(let name) = arguments[0],
              case .string(let oldOwner) = arguments[1], case .string(let newOwner) = arguments[2] else { return nil }
        (self.name, self.oldOwner, self.newOwner) = (name, oldOwner, newOwner)
    }
}
