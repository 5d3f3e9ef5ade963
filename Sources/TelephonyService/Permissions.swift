import DBus
import PeerIdentity
import Foundation
import MonkeyCallAPI
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

    func check(_ request: AccessRequest) -> DBusError? {
        guard let context else { return nil }
        let app = request.caller.app
        guard app.isSandboxed else { return Self.ownerRefusal(request, context) }
        if request.path == Telephony1.rootPath {
            guard let refusal = Self.rootRefusal(request) else { return nil }
            return DBusError.accessDenied("\(app.appID) is a sandboxed app and may not \(refusal)")
        }
        guard let owner = context.appID(owning: request.path), owner != app.appID else { return Self.ownerRefusal(request, context) }
        let what = request.path.isDescendant(of: Telephony1.callRoot) ? "call" : "provider"
        return DBusError.accessDenied("\(app.appID) is a sandboxed app and may not see or use another app's \(what) (\(request.path))")
    }

    /// The app, as xdg-desktop-portal tells it: its sandbox's marks in /proc, or the AppArmor label.
    nonisolated func identify(processID: Int32, credentials: PeerCredentials) throws -> any CallerIdentity {
        try PeerApp.identify(processID: processID, securityLabel: credentials.securityLabel)
    }

    func identificationFailed(of name: String, _ error: any Error) {
        context?.logger.warning("the calls of \(name) were refused: it could not be identified (\(error))")
    }

    /// A provider's objects (its own, its calls', its directory update's) belong to the connection
    /// that registered it.
    func owner(of path: ObjectPath) -> Caller? {
        guard let context, let provider = context.provider(owning: path) else { return nil }
        return Caller(name: provider.owner, app: context.connection.identifiedApp(of: provider.owner) ?? PeerApp(appID: provider.appID))
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

    /// What a sandboxed app may not do at the root object; nil when the request is allowed.
    private static func rootRefusal(_ request: AccessRequest) -> String? {
        let interface = request.propertyInterface ?? request.interface
        switch interface {
        case Telephony1.Manager.interface:
            if request.isPropertyWrite { return "change the Manager settings (\(request.property ?? ""))" }
            if request.isPropertyAccess {
                return request.property == Telephony1.Manager.version.name ? nil : "read the user's Manager settings"
            }
            return [Telephony1.Manager.registerProvider.name, Telephony1.Manager.openURL.name, Telephony1.Manager.subscribe.name,
                    Telephony1.Manager.unsubscribe.name].contains(request.member) ? nil
                : "choose which app opens links (\(request.member))"
        case Telephony1.CallController.interface:
            return nil  // its own providers' calls only: the core answers Error.Unentitled
        case Telephony1.CallDirectory.interface:
            return "use the block list or the call directories (\(request.property ?? request.member))"
        case Telephony1.Recents.interface:
            return "read or change Recents (\(request.property ?? request.member))"
        case Telephony1.Favorites.interface:
            return "read or change Favorites (\(request.property ?? request.member))"
        default:
            return nil  // Introspectable, Peer, ObjectManager (filtered per caller)
        }
    }
}

extension ServiceContext {
    /// The sandboxed app behind a bus connection ("" for a host app or one not yet identified:
    /// every caller of a method is identified before its handler runs).
    func appID(of connectionName: String) -> String {
        connection.identifiedApp(of: connectionName)?.appID ?? ""
    }

    /// The app a provider's or a call's object (or one below it) belongs to; nil for other paths.
    func appID(owning path: ObjectPath) -> String? { provider(owning: path)?.appID }

    /// The provider whose object, or whose call's, is at `path` (or above it); nil for other paths.
    func provider(owning path: ObjectPath) -> Provider? {
        // The element below /Provider or /Call names the provider or the call.
        let elements = path.elements
        let below = Telephony1.providerRoot.elements.count
        guard elements.count > below else { return nil }
        if path.isDescendant(of: Telephony1.providerRoot) {
            guard let number = UInt64(elements[below]) else { return nil }
            return switchboard.provider(ProviderID(number))
        }
        if path.isDescendant(of: Telephony1.callRoot) {
            guard let uuid = UUID(hexDigits: elements[below]), let call = switchboard.call(uuid) else { return nil }
            return switchboard.provider(call.provider)
        }
        return nil
    }
}

extension UUID {
    /// A UUID from 32 hex digits (a call object's last path element).
    init?(hexDigits: Substring) {
        guard hexDigits.count == 32 else { return nil }
        let digits = Array(hexDigits)
        let text = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
        self.init(uuidString: text)
    }
}

extension PeerApp {
    /// The app an app id names (`snap.NAME`, a Flatpak id, or "" for a host app).
    init(appID: String) {
        if appID.isEmpty { self = .host } else if appID.hasPrefix("snap.") { self = .snap(name: String(appID.dropFirst(5))) } else { self = .flatpak(id: appID) }
    }
}
