import FoundationEssentials

/// Who a caller is, as an access policy tells callers apart (for a telephony service: the app
/// behind the connection). The library only compares identities and names them; what an identity
/// may do is the policy's to say.
public protocol CallerIdentity: Sendable, CustomStringConvertible {
    /// Whether `other` is the same identity (two connections of one app, say).
    func isSame(as other: any CallerIdentity) -> Bool
    /// How a caller of this identity on the connection `name` is named in messages and logs; by
    /// default, the connection's name.
    func describe(connection name: String) -> String
}

extension CallerIdentity {
    public func describe(connection name: String) -> String { name }
}

/// The identity of every caller under a policy that tells no callers apart.
public struct UnidentifiedCaller: CallerIdentity {
    public init() {}
    public func isSame(as other: any CallerIdentity) -> Bool { other is UnidentifiedCaller }
    public var description: String { "a caller" }
}

/// Who sent a method call: its bus connection and who the policy says is behind it.
public struct Caller: Sendable, Hashable, CustomStringConvertible {
    /// The unique bus name of the connection.
    public var name: String { storage.name }
    public var identity: any CallerIdentity { storage.identity }
    /// Who pays for what the caller holds (its subscriptions, the bytes of its calls), as the access
    /// policy says (`AccessPolicy.account(of:process:)`): one account may have many connections.
    /// Without one, its connection.
    public var account: String { storage.account }

    /// The fields, shared by the copies: a caller is copied into every call, request and
    /// subscription, and each copy of the fields themselves cost five reference counts
    /// (callgrind, Get and Identify: `Caller` copies 2,500 instructions a call).
    private final class Storage: Sendable {
        let name: String
        let identity: any CallerIdentity
        let account: String

        init(name: String, identity: any CallerIdentity, account: String) {
            self.name = name
            self.identity = identity
            self.account = account
        }
    }
    private let storage: Storage

    public init(name: String, identity: any CallerIdentity, account: String? = nil) {
        storage = Storage(name: name, identity: identity, account: account ?? "connection \(name)")
    }

    public static func == (lhs: Caller, rhs: Caller) -> Bool {
        lhs.name == rhs.name && lhs.identity.isSame(as: rhs.identity)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    public var description: String { identity.describe(connection: name) }
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

/// Which objects' signals a subscriber may hear (`AccessPolicy.scope(of:)`).
public enum SignalScope: Sendable {
    /// Of every object (each signal as `AccessPolicy.mayHear` says): each such subscriber may be
    /// sent a copy of every signal, so they are bounded together (`SubscriptionLimits.unconfined`).
    case unconfined
    /// Only of the objects whose owner (`AccessPolicy.owner(of:)`) is of its own account.
    case ownAccount
}

/// Decides who may call what, and who hears what. Set one with `ObjectServer.setAccessPolicy`:
/// from then on every incoming method call waits until its sender is identified (once per
/// connection, in the order the calls came), then is checked here before its handler runs — one
/// gate for every object, the standard interfaces included, so that no handler can forget it.
/// Who callers are (and what sets one apart from another) is the policy's alone.
public protocol AccessPolicy: AnyObject {
    /// Runs on the connection's queue; nil lets the call through, an error is its reply.
    func check(_ request: AccessRequest) -> DBusError?
    /// Who the process `processID` is, from the bus's credentials of its connection. Runs on the
    /// queue, once per connection; an error refuses its calls.
    func identify(processID: Int32, credentials: PeerCredentials) throws -> any CallerIdentity
    /// The account a caller of `identity` is counted in (`Caller.account`); `process` is its
    /// process as "UID:PID:START" (`PeerCredentials.processKey`), nil when /proc did not say.
    /// nil: its connection is its account. Runs on the queue, once per connection.
    func account(of identity: any CallerIdentity, process: String?) -> String?
    /// Whether `GetManagedObjects` and introspection show `caller` the object at `path`.
    func reveals(_ path: ObjectPath, to caller: Caller) -> Bool
    func identificationFailed(of name: String, _ error: any Error)
    /// The connection an object belongs to: it hears the object's signals without subscribing.
    /// Asked once, when the object is exported. nil: the server's own object (the root).
    func owner(of path: ObjectPath) -> Caller?
    /// Which objects' signals `subscriber` may hear; asked once, when it subscribes.
    func scope(of subscriber: Caller) -> SignalScope
    /// Whether a subscriber hears a signal (of `interface`, for `PropertiesChanged` the interface
    /// whose properties changed) about an object of `owner`: the last word on each signal.
    func mayHear(interface: String, about owner: Caller?, _ subscriber: Caller) -> Bool
}

extension AccessPolicy {
    public func owner(of path: ObjectPath) -> Caller? { nil }

    /// Tells no callers apart.
    public func identify(processID: Int32, credentials: PeerCredentials) throws -> any CallerIdentity { UnidentifiedCaller() }

    /// Each process is an account, however many connections it opens.
    public func account(of identity: any CallerIdentity, process: String?) -> String? { process.map { "process \($0)" } }

    /// Every subscriber may hear of every object.
    public func scope(of subscriber: Caller) -> SignalScope { .unconfined }

    /// Every subscriber hears every signal.
    public func mayHear(interface: String, about owner: Caller?, _ subscriber: Caller) -> Bool { true }

    /// A caller could not be identified (it left meanwhile, or the bus or /proc would not say):
    /// its waiting calls were refused. For the log.
    public func identificationFailed(of name: String, _ error: any Error) {}
}

/// The identified callers of a server and the calls waiting for their identification; lives on
/// the connection's queue.
struct CallerRegistry {
    enum Entry {
        /// Being identified; the calls that arrived meanwhile, in order.
        case identifying([WaitingCall], watch: Subscription)
        /// The caller as every call of its connection is given it, made once.
        case known(Caller, watch: Subscription)
    }
    /// A call waiting for its sender's identification, with its size on the wire (measured once: it costs a copy).
    struct WaitingCall {
        let message: Message
        let bytes: Int
    }
    var entries: [String: Entry] = [:] {
        // Whatever changes, the caller found last is looked up again.
        didSet { lastKnown = nil }
    }
    /// The known caller of the last call admitted: its next call is admitted without a lookup
    /// (an app's calls come in runs); dropped with any change of `entries`.
    var lastKnown: Caller?
    var policy: AccessPolicy?
    /// What waits while senders are identified is bounded, and what is past a bound is refused at
    /// once (LimitsExceeded), its memory freed. libdbus stops reading from the bus while the
    /// messages it has read and we hold pass its received-size limit (63 MiB): held, an app's two
    /// first calls of 33 MB kept the reply to GetConnectionCredentials unread, and so every call
    /// from anyone, until that call's 25 s timeout. A real app's first calls are small (a directory
    /// batch needs a provider registered first).
    static let maximumWaitingBytesPerSender = 16 << 20
    static let maximumWaitingBytes = 48 << 20
    static let maximumWaiting = 256
    var waitingCount = 0
    var waitingBytes = 0
    /// What each account's calls have taken on the wire lately.
    var argumentBytes = ArgumentBytesBudget()
}

extension ObjectServer {
    /// Puts `policy` in front of every method call this server serves. Caller identities are
    /// cached per connection and forgotten when it leaves the bus (`Connection.followNameOwners`
    /// must run).
    public func setAccessPolicy(_ policy: AccessPolicy?) {
        connection.onQueueSync { state.callers.policy = policy }
    }

    /// Who is behind `name`, when a call from it has been identified and it is still on the bus.
    public func identity(of name: String) -> (any CallerIdentity)? {
        connection.onQueueSync {
            if case .known(let caller, _)? = state.callers.entries[name] { return caller.identity }
            return nil
        }
    }

    /// On the queue: the caller of `message` when known; else the message waits for its
    /// sender's identification (started here for the first) and nil is returned.
    func admit(_ message: Message) -> Caller? {
        if let last = state.callers.lastKnown, message.isSent(by: last.name) { return last }
        let sender = message.sender ?? ""
        switch state.callers.entries[sender] {
        case .known(let caller, _)?:
            state.callers.lastKnown = caller
            return caller
        case .identifying(var waiting, let watch)?:
            guard let call = mayWait(message, behind: waiting) else { return nil }
            waiting.append(call)
            state.callers.waitingCount += 1
            state.callers.waitingBytes += call.bytes
            state.callers.entries[sender] = .identifying(waiting, watch: watch)
            return nil
        case nil:
            // Identified whether or not this first call may wait: a sender whose first call was too
            // big is known for its next.
            let call = mayWait(message, behind: [])
            if let call {
                state.callers.waitingCount += 1
                state.callers.waitingBytes += call.bytes
            }
            // Watched before identifying: a sender that leaves meanwhile takes its calls with it.
            let watch = connection.watchVanishing(of: sender) { [weak self] in self?.forgetCaller(sender) }
            state.callers.entries[sender] = .identifying(call.map { [$0] } ?? [], watch: watch)
            connection.identify(sender, with: { [weak self] pid, credentials -> (any CallerIdentity, String) in
                let policy = self?.state.callers.policy
                let identity = try policy?.identify(processID: pid, credentials: credentials) ?? UnidentifiedCaller()
                let process = PeerCredentials.processKey(pid: pid, userID: credentials.userID)
                let account = policy.map { $0.account(of: identity, process: process) } ?? process.map { "process \($0)" }
                return (identity, account ?? "connection \(sender)")
            }) { [weak self] (result: Result<(any CallerIdentity, String), Error>) in
                guard let self else { return }
                connection.onQueue { self.identified(sender, result) }
            }
            return nil
        }
    }

    /// `message` with its size when it may wait for its sender's identification behind `waiting`;
    /// else nil, and it has been refused.
    private func mayWait(_ message: Message, behind waiting: [CallerRegistry.WaitingCall]) -> CallerRegistry.WaitingCall? {
        let size = message.wireSize
        let sendersBytes = waiting.reduce(size) { $0 + $1.bytes }
        let refusal: String? = if sendersBytes > CallerRegistry.maximumWaitingBytesPerSender {
            "a new connection's calls may hold \(CallerRegistry.maximumWaitingBytesPerSender >> 20) MiB until it is identified; this one would make \(sendersBytes) bytes"
        } else if state.callers.waitingBytes + size > CallerRegistry.maximumWaitingBytes || state.callers.waitingCount >= CallerRegistry.maximumWaiting {
            "too many calls are waiting for their senders to be identified; try again"
        } else {
            nil
        }
        guard let refusal else { return CallerRegistry.WaitingCall(message: message, bytes: size) }
        replyError(to: message, DBusError.limitsExceeded(refusal))
        return nil
    }

    /// What waits no longer: counted off the bounds.
    private func stopWaiting(_ waiting: [CallerRegistry.WaitingCall]) {
        state.callers.waitingCount -= waiting.count
        state.callers.waitingBytes -= waiting.reduce(0) { $0 + $1.bytes }
    }

    /// A caller left the bus: whatever of it waits goes too.
    private func forgetCaller(_ sender: String) {
        if case .identifying(let waiting, _)? = state.callers.entries[sender] { stopWaiting(waiting) }
        state.callers.entries[sender] = nil
    }

    /// The identification of `sender` is done: its waiting calls are dispatched in order, or all
    /// refused when it could not be identified (the next call tries again).
    private func identified(_ sender: String, _ result: Result<(any CallerIdentity, String), Error>) {
        guard case .identifying(let waiting, let watch)? = state.callers.entries[sender] else { return }
        stopWaiting(waiting)
        switch result {
        case .success(let (identity, account)):
            state.callers.entries[sender] = .known(Caller(name: sender, identity: identity, account: account), watch: watch)
            for call in waiting { handleMethodCall(call.message) }
        case .failure(let error):
            state.callers.entries[sender] = nil
            state.callers.policy?.identificationFailed(of: sender, error)
            let refusal = DBusError.accessDenied("the caller \(sender) could not be identified: \(error)")
            for call in waiting { replyError(to: call.message, refusal) }
        }
    }

    /// Whether `GetManagedObjects` shows the object at `path` to the caller of `call`.
    func reveals(_ path: ObjectPath, to call: MethodCall) -> Bool {
        guard let caller = call.caller, let policy = state.callers.policy else { return true }
        return policy.reveals(path, to: caller)
    }
}
