import DBus
import FoundationEssentials
import MonkeyCallAPI
import PeerIdentity
import TelephonyCore

/// What a sandboxed app may do, checked for every call before its handler runs (the `Connection`'s
/// access policy). Host apps are the user's own tools, as trusted as the session bus, and may
/// do everything. A sandboxed app may register providers, act as them, use `CallController`
/// (the core keeps it to its own providers' calls: `Error.Unentitled`), open links, and see its
/// own providers and calls; the rest is the user's and answers `AccessDenied` naming the app.
/// Every caller, host or sandboxed, acts as a provider only from the connection that registered it.
@TelephonyActor
final class ServiceAccessPolicy: @TelephonyActor AccessPolicy {
    private weak var context: ServiceContext?

    init(context: ServiceContext) {
        self.context = context
    }

    /// Deny by default: a sandboxed app may make the calls `SandboxGrants` lists, on the objects it
    /// names, and nothing else; the answer is the same whether or not the object exists or belongs
    /// to another app, and names nothing of it: the server answers a refused call with the refusal
    /// whatever its lookup of the object found.
    func check(_ request: AccessRequest) -> DBusError? {
        guard let context else { return nil }
        let app = request.caller.app
        guard app.isSandboxed else { return Self.ownerRefusal(request, context) }
        guard let place = SandboxGrants.place(of: request.path, for: app.appID, context), SandboxGrants.allows(request, at: place) else {
            let what = request.propertyInterface.map { "\(request.isPropertyWrite ? "change" : "read") \($0).\(request.property ?? "*")" }
                ?? "call \(request.interface.isEmpty ? "" : request.interface + ".")\(request.member)"
            return DBusError.accessDenied("\(app.appID) is a sandboxed app and may not \(what) on \(request.path)")
        }
        return Self.ownerRefusal(request, context)
    }

    /// The app, as xdg-desktop-portal tells it: its sandbox's marks in /proc, or the AppArmor label.
    nonisolated func identify(processID: Int32, credentials: PeerCredentials) throws -> any CallerIdentity {
        try PeerApp.identify(processID: processID, securityLabel: credentials.securityLabel)
    }

    /// A sandboxed app is one account however many connections it opens; a host caller is its
    /// process, however many connections or names it uses (`PeerApp.account`).
    nonisolated func account(of identity: any CallerIdentity, process: String?) -> String? {
        (identity as? PeerApp ?? .host).account(process: process)
    }

    /// A host subscriber may hear of every object; a sandboxed one only of its own app's (the
    /// objects of the providers it registered, and their calls).
    func scope(of subscriber: Caller) -> SignalScope {
        subscriber.app.isSandboxed ? .ownAccount : .unconfined
    }

    /// A host subscriber hears everything; a sandboxed one only of its own app's objects.
    func mayHear(interface: String, about owner: Caller?, _ subscriber: Caller) -> Bool {
        guard subscriber.app.isSandboxed else { return true }
        guard let owner else { return false }
        return owner.app == subscriber.app
    }

    /// Why `Subscribe` was refused, in the words of the API: the app, or the host process, that
    /// has as many subscribed connections as it may; or the host processes, or all, have.
    nonisolated static func explain(_ refusal: SubscriptionRefusal, of caller: Caller, limits: SwitchboardLimits) -> String {
        let retry = "those that do not read are dropped within \(SubscriptionRefusal.patience.components.seconds) s: try again then"
        switch refusal {
        case .accountFull(let count):
            return "\(caller.app.isSandboxed ? "the app \(caller.app)" : "this process") already has \(count) subscribed connections; the limit is \(limits.maximumSubscriptionsPerApp)"
        case .unconfinedFull(let count):
            return "host processes have \(count) subscribed connections, their limit; \(retry)"
        case .full(let count):
            return "the service has \(count) subscribed connections, its limit; \(retry)"
        }
    }

    func identificationFailed(of name: String, _ error: any Error) {
        context?.logger.warning("the calls of \(name) were refused: it could not be identified (\(error))")
    }

    /// A provider's objects (its own, its calls', its directory update's) belong to the connection
    /// that registered it.
    func owner(of path: ObjectPath) -> Caller? {
        guard let context, let provider = context.provider(owning: path) else { return nil }
        return Caller(name: provider.owner, app: context.objects.identifiedApp(of: provider.owner) ?? PeerApp(appID: provider.appID))
    }

    func reveals(_ path: ObjectPath, to caller: Caller) -> Bool {
        guard caller.app.isSandboxed else { return true }
        return context?.appID(owning: path) == caller.app.appID
    }

    /// A provider is acted as (its own methods, its directory update's) only by the connection
    /// that registered it, host or sandboxed; anyone allowed may read its properties.
    private static func ownerRefusal(_ request: AccessRequest, _ context: ServiceContext) -> DBusError? {
        guard !request.isPropertyAccess, request.interface == Telephony1.Provider.interface || request.interface == Telephony1.CallDirectoryUpdate.interface,
              let provider = context.provider(owning: request.path), provider.owner != request.caller.name else { return nil }
        return DBusError.accessDenied("only the connection that registered provider \(provider.id) may call \(request.member)")
    }
}

/// Everything a sandboxed app may call, and where (API.md: it registers providers, acts as them,
/// uses CallController on its own providers' calls, opens links, subscribes, and sees its own
/// providers and calls). What is not here answers AccessDenied: the user's Recents, Favorites,
/// settings, block list and directories, other apps' objects, and any interface added later
/// until it is added here.
enum SandboxGrants {
    /// The objects a sandboxed app may reach.
    enum Place: CaseIterable {
        case root
        /// `/Provider` and `/Call`: introspection lists only its own below them.
        case listing
        case ownProvider, ownDirectoryUpdate, ownCall
    }

    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    private static func methods(of spec: InterfaceSpec) -> Set<String> {
        Set(spec.members.filter { $0.kind == .method }.map(\.name))
    }

    private static let everywhere: [String: Set<String>] = [introspectable: ["Introspect"], peer: ["Ping", "GetMachineId"]]

    /// Methods by interface at each place (Properties is `reads`).
    static let methods: [Place: [String: Set<String>]] = [
        .root: everywhere.merging([
            Telephony1.Manager.interface: [Telephony1.Manager.registerProvider.name, Telephony1.Manager.openURL.name,
                                           Telephony1.Manager.subscribe.name, Telephony1.Manager.unsubscribe.name],
            // Its own providers' calls only: the core answers Unentitled for any other.
            Telephony1.CallController.interface: methods(of: Telephony1.CallController.spec),
            // Filtered per caller: its own objects only.
            objectManager: ["GetManagedObjects"],
        ]) { $1 },
        .listing: everywhere,
        .ownProvider: everywhere.merging([Telephony1.Provider.interface: methods(of: Telephony1.Provider.spec)]) { $1 },
        .ownDirectoryUpdate: everywhere.merging([Telephony1.CallDirectoryUpdate.interface: methods(of: Telephony1.CallDirectoryUpdate.spec)]) { $1 },
        .ownCall: everywhere.merging([Telephony1.Call.interface: methods(of: Telephony1.Call.spec)]) { $1 },
    ]

    /// Properties it may read (Get, GetAll), by interface at each place; nil: all of that interface.
    /// It writes none.
    static let reads: [Place: [String: Set<String>?]] = [
        .root: [Telephony1.Manager.interface: [Telephony1.Manager.version.name]],
        .ownProvider: [Telephony1.Provider.interface: nil],
        .ownCall: [Telephony1.Call.interface: nil],
    ]

    /// Where `path` is for the sandboxed app `appID`; nil for anything it may not reach (another
    /// app's object, or none at all: the two read the same).
    @TelephonyActor
    static func place(of path: ObjectPath, for appID: String, _ context: ServiceContext) -> Place? {
        if path == Telephony1.rootPath { return .root }
        if path == Telephony1.providerRoot || path == Telephony1.callRoot { return .listing }
        guard let provider = context.provider(owning: path), provider.appID == appID else { return nil }
        let providerPath = Telephony1.providerPath(provider.id.rawValue)
        if path == providerPath { return .ownProvider }
        if path == Telephony1.directoryUpdatePath(providerPath) { return .ownDirectoryUpdate }
        if let element = path.element(below: Telephony1.callRoot), path.rawValue.utf8.count == Telephony1.callRoot.rawValue.utf8.count + 1 + element.utf8.count { return .ownCall }
        return nil
    }

    static func allows(_ request: AccessRequest, at place: Place) -> Bool {
        if request.interface == properties {
            guard let interface = request.propertyInterface, !request.isPropertyWrite, let readable = reads[place]?[interface] else { return false }
            guard let readable else { return true }
            // GetAll of an interface of which only some may be read is refused.
            return request.property.map(readable.contains) ?? false
        }
        return methods[place]?[request.interface]?.contains(request.member) == true
    }
}

extension ServiceContext {
    /// The sandboxed app behind a bus connection ("" for a host app or one not yet identified:
    /// every caller of a method is identified before its handler runs).
    func appID(of connectionName: String) -> String {
        objects.identifiedApp(of: connectionName)?.appID ?? ""
    }

    /// The app a provider's or a call's object (or one below it) belongs to; nil for other paths.
    func appID(owning path: ObjectPath) -> String? { provider(owning: path)?.appID }

    /// The provider whose object, or whose call's, is at `path` (or above it); nil for other paths.
    func provider(owning path: ObjectPath) -> Provider? {
        // The element below /Provider or /Call names the provider or the call (read as bytes: this
        // runs for every call of a provider's methods and every signal about its objects).
        if let element = path.element(below: Telephony1.providerRoot) {
            guard let number = UInt64(element) else { return nil }
            return switchboard.provider(ProviderID(number))
        }
        if let element = path.element(below: Telephony1.callRoot) {
            guard let uuid = UUID(hexDigits: element), let call = switchboard.call(uuid) else { return nil }
            return switchboard.provider(call.provider)
        }
        return nil
    }
}

extension UUID {
    /// A UUID from 32 hex digits, either case (a call object's last path element).
    init?(hexDigits: Substring) {
        let utf8 = hexDigits.utf8
        guard utf8.count == 32 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var index = utf8.startIndex
        let complete = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            for offset in 0..<16 {
                guard let high = nibble(utf8[index]) else { return false }
                index = utf8.index(after: index)
                guard let low = nibble(utf8[index]) else { return false }
                index = utf8.index(after: index)
                out[offset] = high << 4 | low
            }
            return true
        }
        guard complete else { return nil }
        self.init(uuid: bytes)
    }
}

extension PeerApp {
    /// The app an app id names (`snap.NAME`, a Flatpak id, or "" for a host app).
    init(appID: String) {
        if appID.isEmpty { self = .host } else if appID.hasPrefix("snap.") { self = .snap(name: String(appID.dropFirst(5))) } else { self = .flatpak(id: appID) }
    }
}
