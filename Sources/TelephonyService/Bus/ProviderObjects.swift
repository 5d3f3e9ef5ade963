import DBus
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// One object per registered provider (`/Provider/<n>`): its own connection reports its calls
/// there and receives the provider signals (actions to perform, audio sessions) there alone.
/// Owns the exported objects, who owns each provider, and the watch on each owner's connection.
@TelephonyActor
final class ProviderObjects: ServiceObject, SwitchboardObserver {
    private let context: ServiceContext
    private let directories: DirectoryInterfaces
    /// Each registered provider's owner (its signals go there alone) and its object.
    private var registered: [ProviderID: (owner: String, object: ExportedObject?)] = [:]
    /// One watch per connection that owns providers: when it leaves, they go.
    private var ownerWatches: [String: Subscription] = [:]

    init(context: ServiceContext, directories: DirectoryInterfaces) {
        self.context = context
        self.directories = directories
    }

    /// `Manager.RegisterProvider`: the provider's object is exported (by the event), the reply
    /// names it, then `DidBegin` follows.
    func register(_ configuration: ProviderConfiguration, reply: Reply<ObjectPath>) throws {
        let sender = reply.call.sender
        if ownerWatches[sender] == nil {
            ownerWatches[sender] = context.connection.watchVanishing(of: sender) { [weak self] in
                guard let self else { return }
                context.logger.info("connection \(sender) left the bus; its providers go with it")
                context.switchboard.ownerVanished(sender)
            }
        }
        let app = context.appID(of: sender)
        var configuration = configuration
        // As the notification portal does: a sandboxed app's notifications are its own, whatever it claims.
        if !app.isEmpty { configuration.desktopEntry = app }
        // A sandboxed app as the user knows it, read once here (a desktop file of a few KiB).
        let desktopLabel = app.isEmpty ? "" : AppNames.label(appID: app)
        let label = app.isEmpty ? "" : desktopLabel + AppNames.chosenNameBeside(configuration.name, label: desktopLabel)
        let provider = try context.switchboard.registerProvider(owner: sender, appID: app, process: reply.call.caller?.account ?? "",
                                                                appLabel: label, configuration: configuration)
        context.logger.info("provider \(provider.id) '\(provider.name)' registered by \(sender)\(provider.isSandboxed ? " (\(provider.appID))" : "")")
        context.linkClaims.claim(provider)
        // The reply first, so that the app knows its path before DidBegin arrives.
        reply.send(Telephony1.providerPath(provider.id.rawValue))
        emit(to: provider.id, Telephony1.Provider.didBegin)
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .providerRegistered(let provider):
            export(provider)
        case .providerRemoved(let provider):
            context.objects.unexport(Telephony1.providerPath(provider.id.rawValue))
            registered[provider.id] = nil
            if context.switchboard.providers(ownedBy: provider.owner).isEmpty { ownerWatches[provider.owner] = nil }
            context.logger.info("provider \(provider.id) '\(provider.name)' removed")
        case .callAdded(let call), .callRemoved(let call):
            registered[call.provider]?.object?.propertiesChanged([Telephony1.Provider.calls])
        case .performAction(let action):
            emit(to: action.provider, Telephony1.Provider.performAction,
                 action.id.apiString, action.kind.name, action.callUUID.apiString, Self.arguments(of: action))
        case .actionTimedOut(let action):
            emit(to: action.provider, Telephony1.Provider.timedOutPerformingAction, action.id.apiString, action.kind.name, action.callUUID.apiString)
        case .audioSessionActivated(let id):
            emit(to: id, Telephony1.Provider.didActivateAudioSession)
        case .audioSessionDeactivated(let id):
            emit(to: id, Telephony1.Provider.didDeactivateAudioSession)
        case .callChanged, .callRefused, .transactionCompleted:
            break
        }
    }

    /// The service is stopping and has ended every call still up: each app that had one hears
    /// DidReset ("every call ended").
    func reset(_ ids: [ProviderID]) {
        for id in ids { emit(to: id, Telephony1.Provider.didReset) }
    }

    /// `PerformAction`'s `args`: the action's keys as in `RequestTransaction`, plus `TransactionUUID`.
    private static func arguments(of action: Action) -> [String: DBusValue] {
        let call = action.callUUID.apiString
        var api: Telephony1.Action
        switch action.kind {
        case .start(let handle, let video, let contactIdentifier):
            api = .start(call, handle: handle.value, handleType: handle.type.rawValue, video: video, contactIdentifier: contactIdentifier)
        case .answer: api = .answer(call)
        case .end: api = .end(call)
        case .setHeld(let onHold): api = .setHeld(call, onHold)
        case .setMuted(let muted): api = .setMuted(call, muted)
        case .setGroup(let other): api = .setGroup(call, with: other?.apiString ?? "")
        case .playDTMF(let digits, let type): api = .playDTMF(call, digits: digits, type: type.rawValue)
        }
        api.transactionUUID = action.transactionID.apiString
        return api.arguments
    }

    /// Provider signals go to the provider's own connection only.
    private func emit<each A: DBusRepresentable>(to id: ProviderID, _ signal: SignalSpec<Args<repeat each A>>, _ values: repeat each A) {
        guard let owner = registered[id]?.owner else { return }
        do {
            try context.connection.emit(signal, path: Telephony1.providerPath(id.rawValue), repeat each values, destination: owner)
        } catch {
            context.logger.error("cannot send \(signal.name) to provider \(id): \(error)")
        }
    }

    private func export(_ provider: Provider) {
        var object: ExportedObject?
        do {
            object = try context.objects.export(Telephony1.providerPath(provider.id.rawValue), [providerInterface(provider)])
        } catch {
            context.logger.error("cannot export provider \(provider.id): \(error)")
        }
        registered[provider.id] = (provider.owner, object)
    }

    private func endReason(_ text: String) throws -> EndReason {
        guard let reason = EndReason(rawValue: text) else {
            throw DBusError.invalidArgs("end reason '\(text.prefix(64))' is not one of \(EndReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    /// The provider's interface. Only the connection that registered the provider reaches a
    /// handler (`ServiceAccessPolicy`'s one check, in the same turn of the queue, found it
    /// registered and owned by the caller), so none looks the provider up again.
    private func providerInterface(_ provider: Provider) -> Interface {
        typealias API = Telephony1.Provider
        let id = provider.id
        return Interface(API.interface) {
            method(API.reportNewIncomingCall) { providers, call, uuid, update in
                Telephony1.callPath(try providers.context.switchboard.reportNewIncomingCall(provider: id, uuid: uuid, update: update).uuid.apiString)
            }
            method(API.reportCallUpdated) { providers, call, uuid, update in
                try providers.context.switchboard.reportCallUpdated(provider: id, uuid: uuid, update: update)
            }
            method(API.reportCallEnded) { providers, call, uuid, reason, at in
                try providers.context.switchboard.reportCallEnded(provider: id, uuid: uuid,
                                                        reason: try providers.endReason(reason), at: at)
            }
            method(API.reportOutgoingCallStartedConnecting) { providers, call, uuid, at in
                try providers.context.switchboard.reportOutgoingCallStartedConnecting(provider: id, uuid: uuid, at: at)
            }
            method(API.reportOutgoingCallConnected) { providers, call, uuid, at in
                try providers.context.switchboard.reportOutgoingCallConnected(provider: id, uuid: uuid, at: at)
            }
            method(API.fulfillAction) { providers, call, action, info in
                let at = try Telephony1.ActionInfo(entries: info).date ?? 0
                try providers.context.switchboard.fulfillAction(provider: id, action: action, at: at)
            }
            method(API.failAction) { providers, call, action, info in
                _ = try Telephony1.ActionInfo(entries: info)
                try providers.context.switchboard.failAction(provider: id, action: action)
            }
            method(API.beginCallDirectoryUpdate) { providers, call, incremental in
                guard let provider = providers.context.switchboard.provider(id) else { throw DBusError.unknownObject("provider \(id) is gone") }
                return try providers.directories.beginUpdate(provider, incremental: incremental)
            }
            method(API.invalidate) { providers, call in
                providers.context.switchboard.invalidateProvider(id)
            }
            Signal(API.didBegin)
            Signal(API.performAction)
            Signal(API.timedOutPerformingAction)
            Signal(API.didReset)
            Signal(API.didActivateAudioSession)
            Signal(API.didDeactivateAudioSession)
            Signal(API.didRequestShowApp)
            Property(API.name) { provider.configuration.name }
            Property(API.owner) { provider.owner }
            Property(API.appId) { provider.appID }
            Property(API.configuration) { Encode.configuration(provider.configuration) }
            Property(API.iconData) { provider.configuration.iconData }
            property(API.calls) { providers in providers.context.switchboard.calls(of: id).map { Telephony1.callPath($0.uuid.apiString) } }
        }
    }
}
