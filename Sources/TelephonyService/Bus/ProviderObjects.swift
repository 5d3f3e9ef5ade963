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
    private let recents: RecentsInterface
    /// Each registered provider's owner (its signals go there alone) and its object.
    private var registered: [ProviderID: (owner: String, object: ExportedObject?)] = [:]
    /// One watch per connection that owns providers: when it leaves, they go.
    private var ownerWatches: [String: Subscription] = [:]

    init(context: ServiceContext, directories: DirectoryInterfaces, recents: RecentsInterface) {
        self.context = context
        self.directories = directories
        self.recents = recents
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
            context.connection.unexport(Telephony1.providerPath(provider.id.rawValue))
            registered[provider.id] = nil
            if context.switchboard.providers(ownedBy: provider.owner).isEmpty { ownerWatches[provider.owner] = nil }
            context.logger.info("provider \(provider.id) '\(provider.name)' removed")
        case .callAdded(let call), .callRemoved(let call):
            registered[call.provider]?.object?.propertiesChanged([Telephony1.Provider.calls])
        case .performAction(let action):
            emit(to: action.provider, Telephony1.Provider.performAction,
                 action.id.apiString, action.kind.name, action.callUUID.apiString, Encode.arguments(of: action))
        case .actionTimedOut(let action):
            emit(to: action.provider, Telephony1.Provider.timedOutPerformingAction, action.id.apiString, action.kind.name, action.callUUID.apiString)
        case .audioSessionActivated(let id):
            emit(to: id, Telephony1.Provider.didActivateAudioSession)
        case .audioSessionDeactivated(let id):
            emit(to: id, Telephony1.Provider.didDeactivateAudioSession)
        case .callChanged, .transactionCompleted:
            break
        }
    }

    /// The service is stopping and has ended every call still up: each app that had one hears
    /// DidReset ("every call ended").
    func reset(_ ids: [ProviderID]) {
        for id in ids { emit(to: id, Telephony1.Provider.didReset) }
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
            object = try context.connection.export(Telephony1.providerPath(provider.id.rawValue), [providerInterface(provider)])
        } catch {
            context.logger.error("cannot export provider \(provider.id): \(error)")
        }
        registered[provider.id] = (provider.owner, object)
    }

    /// The provider a call on its object acts as. Only the connection that registered it gets
    /// here (`ServiceAccessPolicy`); it may have just gone.
    private func owned(_ id: ProviderID, by call: MethodCall) throws -> ProviderID {
        guard context.switchboard.provider(id) != nil else {
            throw DBusError.unknownObject("provider \(id) is no longer registered")
        }
        return id
    }

    /// Refuses a call the user does not want to ring, and records it.
    private func screen(_ uuid: UUID, _ update: CallUpdate, from provider: Provider) throws(TelephonyError) {
        guard let handle = update.handle else { return }
        let favorite = context.favoriteNames[handle.value]
        // Contacts count as known callers, as on iOS; an address book still being read only knows fewer.
        let contact = context.contactName(of: handle)
        let verdict = context.screening.screen(handle.value, isFavorite: favorite != nil, isContact: contact != nil,
                                               isKnown: context.history?.knows(handle: handle.value) == true, now: context.switchboard.clock.now)
        let name = context.callerName(of: handle, supplied: update.localizedCallerName)
        switch verdict {
        case .ring:
            return
        case .blocked:
            recents.recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .blocked)
            throw TelephonyError.filteredByBlockList
        case .filtered:
            recents.recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .filtered)
            throw TelephonyError.filteredByDoNotDisturb
        case .silenced:
            recents.recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .missed)
            throw TelephonyError.filteredByDoNotDisturb
        }
    }

    private func endReason(_ text: String) throws -> EndReason {
        guard let reason = EndReason(rawValue: text) else {
            throw DBusError.invalidArgs("end reason '\(text.prefix(64))' is not one of \(EndReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    private func providerInterface(_ provider: Provider) -> Interface {
        typealias API = Telephony1.Provider
        let id = provider.id
        return Interface(API.interface) {
            method(API.reportNewIncomingCall) { providers, call, uuidText, fields in
                let provider = try providers.owned(id, by: call)
                let uuid = try Decode.uuid(uuidText)
                let update = try Decode.update(fields)
                let switchboard = providers.context.switchboard
                let admission = try switchboard.admitNewIncomingCall(provider: provider, uuid: uuid, update: update)
                try providers.screen(uuid, update, from: admission.provider)
                return Telephony1.callPath(try switchboard.ring(admission).uuid.apiString)
            }
            method(API.reportCallUpdated) { providers, call, uuid, update in
                try providers.context.switchboard.reportCallUpdated(provider: try providers.owned(id, by: call), uuid: try Decode.uuid(uuid), update: try Decode.update(update))
            }
            method(API.reportCallEnded) { providers, call, uuid, reason, at in
                try providers.context.switchboard.reportCallEnded(provider: try providers.owned(id, by: call), uuid: try Decode.uuid(uuid),
                                                        reason: try providers.endReason(reason), at: at)
            }
            method(API.reportOutgoingCallStartedConnecting) { providers, call, uuid, at in
                try providers.context.switchboard.reportOutgoingCallStartedConnecting(provider: try providers.owned(id, by: call), uuid: try Decode.uuid(uuid), at: at)
            }
            method(API.reportOutgoingCallConnected) { providers, call, uuid, at in
                try providers.context.switchboard.reportOutgoingCallConnected(provider: try providers.owned(id, by: call), uuid: try Decode.uuid(uuid), at: at)
            }
            method(API.fulfillAction) { providers, call, action, info in
                let provider = try providers.owned(id, by: call)
                let at = try Telephony1.ActionInfo(entries: info).date ?? 0
                try providers.context.switchboard.fulfillAction(provider: provider, action: try Decode.uuid(action, "action UUID"), at: at)
            }
            method(API.failAction) { providers, call, action, info in
                let provider = try providers.owned(id, by: call)
                _ = try Telephony1.ActionInfo(entries: info)
                try providers.context.switchboard.failAction(provider: provider, action: try Decode.uuid(action, "action UUID"))
            }
            method(API.beginCallDirectoryUpdate) { providers, call, incremental in
                let id = try providers.owned(id, by: call)
                guard let provider = providers.context.switchboard.provider(id) else { throw DBusError.unknownObject("provider \(id) is gone") }
                return try providers.directories.beginUpdate(provider, incremental: incremental)
            }
            method(API.invalidate) { providers, call in
                providers.context.switchboard.invalidateProvider(try providers.owned(id, by: call))
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
