import Foundation

/// Who sent a method call: its bus connection and the app behind it.
public struct Caller: Sendable, Hashable, CustomStringConvertible {
    /// The unique bus name of the connection.
    public let name: String
    public let app: PeerApp

    public init(name: String, app: PeerApp) {
        self.name = name
        self.app = app
    }

    public var description: String { app.isSandboxed ? "\(app.appID) (\(name))" : name }
}

/// One incoming call as the access policy sees it, after dispatch found its method.
public struct AccessRequest: Sendable {
    public let caller: Caller
    public let path: ObjectPath
    public let interface: String
    public let member: String
    /// For `org.freedesktop.DBus.Properties` calls: the interface whose properties are read or
    /// written, and the property (nil for `GetAll`).
    public let propertyInterface: String?
    public let property: String?

    /// Whether this reads or writes a property through `org.freedesktop.DBus.Properties`.
    public var isPropertyAccess: Bool { propertyInterface != nil }
    /// `Properties.Set`.
    public var isPropertyWrite: Bool { isPropertyAccess && member == "Set" }
}

/// Decides who may call what. Set one with `Connection.setAccessPolicy`: from then on every
/// incoming method call waits until its sender is identified (once per connection, in the order
/// the calls came), then is checked here before its handler runs — one gate for every object,
/// the standard interfaces included, so that no handler can forget it.
public protocol AccessPolicy: AnyObject {
    /// Runs on the connection's queue; nil lets the call through, an error is its reply.
    func check(_ request: AccessRequest) -> DBusError?
    /// Whether `GetManagedObjects` and introspection show `caller` the object at `path`.
    func reveals(_ path: ObjectPath, to caller: Caller) -> Bool
    func identificationFailed(of name: String, _ error: any Error)
    /// The connection an object belongs to: it hears the object's signals without subscribing.
    /// Asked once, when the object is exported. nil: the service's own object (the root).
    func owner(of path: ObjectPath) -> Caller?
    /// Whether a subscriber hears a signal (of `interface`, for `PropertiesChanged` the interface
    /// whose properties changed) about an object of `owner`.
    func mayHear(interface: String, about owner: Caller?, _ subscriber: Caller) -> Bool
}

extension AccessPolicy {
    public func owner(of path: ObjectPath) -> Caller? { nil }

    /// A host subscriber hears everything; a sandboxed one only of its own app's objects.
    public func mayHear(interface: String, about owner: Caller?, _ subscriber: Caller) -> Bool {
        guard subscriber.app.isSandboxed else { return true }
        guard let owner else { return false }
        return owner.app == subscriber.app
    }

    /// A caller could not be identified (it left meanwhile, or the bus or /proc would not say):
    /// its waiting calls were refused. For the log.
    public func identificationFailed(of name: String, _ error: any Error) {}
}

/// The identified callers of a connection and the calls waiting for their identification;
/// lives on the connection's queue.
struct CallerRegistry {
    enum Entry {
        /// Being identified; the calls that arrived meanwhile, in order.
        case identifying([Message], watch: Subscription)
        case known(PeerApp, watch: Subscription)
    }
    var entries: [String: Entry] = [:]
    var policy: AccessPolicy?
}

extension Connection {
    /// Puts `policy` in front of every method call this connection serves. Caller identities are
    /// cached per connection and forgotten when it leaves the bus (`followNameOwners` must run).
    public func setAccessPolicy(_ policy: AccessPolicy?) {
        onQueueSync { callers.policy = policy }
    }

    /// The app behind `name`, when a call from it has been identified and it is still on the bus.
    public func identifiedApp(of name: String) -> PeerApp? {
        onQueueSync {
            if case .known(let app, _)? = callers.entries[name] { return app }
            return nil
        }
    }

    /// On the queue: the caller of `message` when known; else the message waits for its
    /// sender's identification (started here for the first) and nil is returned.
    func admit(_ message: Message) -> Caller? {
        let sender = message.sender ?? ""
        switch callers.entries[sender] {
        case .known(let app, _)?:
            return Caller(name: sender, app: app)
        case .identifying(var waiting, let watch)?:
            waiting.append(message)
            callers.entries[sender] = .identifying(waiting, watch: watch)
            return nil
        case nil:
            // Watched before identifying: a sender that leaves meanwhile takes its calls with it.
            let watch = watchVanishing(of: sender) { [weak self] in self?.callers.entries[sender] = nil }
            callers.entries[sender] = .identifying([message], watch: watch)
            peerApp(of: sender) { [weak self] result in
                guard let self else { return }
                onQueue { self.identified(sender, result) }
            }
            return nil
        }
    }

    /// The identification of `sender` is done: its waiting calls are dispatched in order, or all
    /// refused when it could not be identified (the next call tries again).
    private func identified(_ sender: String, _ result: Result<PeerApp, Error>) {
        guard case .identifying(let waiting, let watch)? = callers.entries[sender] else { return }
        switch result {
        case .success(let app):
            callers.entries[sender] = .known(app, watch: watch)
            for message in waiting { handleMethodCall(message) }
        case .failure(let error):
            callers.entries[sender] = nil
            callers.policy?.identificationFailed(of: sender, error)
            let refusal = DBusError.accessDenied("the caller \(sender) could not be identified: \(error)")
            for message in waiting { replyError(to: message, refusal) }
        }
    }

    /// The policy's verdict on a call to `method` found at `path`; nil when allowed.
    func accessDenial(_ message: Message, caller: Caller?, interface: String, arguments: [DBusValue]) -> DBusError? {
        guard let caller, let policy = callers.policy, let path = message.path, let member = message.member else { return nil }
        var propertyInterface: String?
        var property: String?
        if interface == StandardInterfaces.properties {
            if case .string(let name)? = arguments.first { propertyInterface = name }
            if arguments.count > 1, case .string(let name) = arguments[1] { property = name }
        }
        return policy.check(AccessRequest(caller: caller, path: path, interface: interface, member: member,
                                          propertyInterface: propertyInterface, property: property))
    }

    /// Whether `GetManagedObjects` shows the object at `path` to the caller of `call`.
    func reveals(_ path: ObjectPath, to call: MethodCall) -> Bool {
        guard let caller = call.caller, let policy = callers.policy else { return true }
        return policy.reveals(path, to: caller)
    }
}
