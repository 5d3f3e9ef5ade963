import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

extension TelephonyService {
    func managerInterface() -> Interface {
        typealias Manager = Telephony1.Manager
        return Interface(Manager.interface) {
            methodReplyingLater(Manager.registerProvider) { service, reply, configuration in
                try service.registerProvider(try Decode.configuration(configuration), reply: reply)
            }
            method(Manager.openURL) { service, call, url in try service.openURL(url, from: call.sender) }
            method(Manager.listLinkHandlers) { service, _ in service.linkClaims.handlers }
            method(Manager.setLinkHandler) { service, _, scheme, app in try service.linkClaims.choose(app, for: scheme) }
            Property(Manager.version) { Telephony1.version }
            screeningProperties()
        }
    }

    private func registerProvider(_ configuration: ProviderConfiguration, reply: Reply<ObjectPath>) throws {
        let sender = reply.call.sender
        if ownerWatches[sender] == nil {
            ownerWatches[sender] = connection.watchVanishing(of: sender) { [weak self] in
                guard let self else { return }
                logger.info("connection \(sender) left the bus; its providers go with it")
                switchboard.ownerVanished(sender)
            }
        }
        let app = appID(of: sender)
        var configuration = configuration
        // As the notification portal does: a sandboxed app's notifications are its own, whatever it claims.
        if !app.isEmpty { configuration.desktopEntry = app }
        let provider = try switchboard.registerProvider(owner: sender, appID: app, configuration: configuration)
        logger.info("provider \(provider.id) '\(provider.name)' registered by \(sender)\(provider.isSandboxed ? " (\(provider.appID))" : "")")
        linkClaims.claim(provider)
        // The reply first, so that the app knows its path before DidBegin arrives.
        reply.send(Telephony1.providerPath(provider.id.rawValue))
        emitToProvider(provider.id, Telephony1.Provider.didBegin)
    }

    /// A link becomes a start action at the app that handles its scheme.
    func openURL(_ url: String, from requester: String) throws -> String {
        let link: CallLink
        do {
            link = try CallLink(parsing: url)
        } catch {
            throw APIError.invalidURL(error.description)
        }
        guard let provider = switchboard.provider(for: link, handledBy: linkClaims.handlers[link.scheme]) else {
            let wanted = link.scheme == "tel" ? "takes phone numbers or declares URLSchemes [\"tel\"]" : "declares URLSchemes [\"\(link.scheme)\"]"
            throw APIError.noProvider("no app for \(link.scheme): links is running (none \(wanted))")
        }
        let uuid = UUID()
        // Not kept to the opener's own providers: a link is for whichever app handles its scheme.
        _ = try switchboard.requestTransaction([.start(uuid, handle: link.handle, video: link.video, provider: provider.id)], requester: requester)
        logger.info("link \(link.scheme): to \(provider.name)")
        return uuid.apiString
    }

    func callControllerInterface() -> Interface {
        typealias Controller = Telephony1.CallController
        return Interface(Controller.interface) {
            method(Controller.requestTransaction) { service, call, actions in
                try service.request(try actions.map { try Decode.action(kind: $0.kind, $0.args) }, from: call.sender)
            }
            method(Controller.startCall) { service, call, handle, options in
                var args = options
                args[Telephony1.Key.handle] = .string(handle)
                if args[Telephony1.Key.callUUID] == nil { args[Telephony1.Key.callUUID] = .string(UUID().apiString) }
                let start = try Decode.action(kind: "start", args)
                return (start.callUUID.apiString, try service.request([start], from: call.sender))
            }
            method(Controller.answerCall) { service, call, uuid in try service.request([.answer(try Decode.uuid(uuid))], from: call.sender) }
            method(Controller.endCall) { service, call, uuid in try service.request([.end(try Decode.uuid(uuid))], from: call.sender) }
            method(Controller.setHeld) { service, call, uuid, onHold in
                try service.request([.setHeld(try Decode.uuid(uuid), onHold)], from: call.sender)
            }
            method(Controller.setMuted) { service, call, uuid, muted in
                try service.request([.setMuted(try Decode.uuid(uuid), muted)], from: call.sender)
            }
            method(Controller.setGroup) { service, call, uuid, other in
                let action = try Decode.action(kind: "set-group", [Telephony1.Key.callUUID: .string(uuid), Telephony1.Key.groupWith: .string(other)])
                return try service.request([action], from: call.sender)
            }
            method(Controller.playDTMF) { service, call, uuid, digits, type in
                let action = try Decode.action(kind: "play-dtmf",
                                               [Telephony1.Key.callUUID: .string(uuid), Telephony1.Key.digits: .string(digits), Telephony1.Key.type: .string(type)])
                return try service.request([action], from: call.sender)
            }
            Signal(Controller.transactionCompleted)
        }
    }
}
