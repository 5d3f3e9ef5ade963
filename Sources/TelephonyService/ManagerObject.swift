import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

/// `Manager` on the root object: providers register, links are opened, and the user's
/// Do Not Disturb and media settings are read and written as properties that persist.
final class ManagerObject: ServiceObject {
    private let context: ServiceContext
    private let providers: ProviderObjects
    private let controller: CallControllerInterface

    init(context: ServiceContext, providers: ProviderObjects, controller: CallControllerInterface) {
        self.context = context
        self.providers = providers
        self.controller = controller
    }

    func interface() -> Interface {
        typealias Manager = Telephony1.Manager
        return Interface(Manager.interface) {
            methodReplyingLater(Manager.registerProvider) { manager, reply, configuration in
                try manager.providers.register(try Decode.configuration(configuration), reply: reply)
            }
            method(Manager.openURL) { manager, call, url in try manager.openURL(url, from: call.sender) }
            method(Manager.listLinkHandlers) { manager, _ in manager.context.linkClaims.handlers }
            method(Manager.setLinkHandler) { manager, _, scheme, app in try manager.context.linkClaims.choose(app, for: scheme) }
            Property(Manager.version) { Telephony1.version }
            screeningProperties()
        }
    }

    /// A link becomes a start action at the app that handles its scheme.
    func openURL(_ url: String, from requester: String) throws -> String {
        let link: CallLink
        do {
            link = try CallLink(parsing: url)
        } catch {
            throw APIError.invalidURL(error.description)
        }
        guard let provider = context.switchboard.provider(for: link, handledBy: context.linkClaims.handlers[link.scheme]) else {
            let wanted = link.scheme == "tel" ? "takes phone numbers or declares URLSchemes [\"tel\"]" : "declares URLSchemes [\"\(link.scheme)\"]"
            throw APIError.noProvider("no app for \(link.scheme): links is running (none \(wanted))")
        }
        let uuid = UUID()
        // Not kept to the opener's own providers: a link is for whichever app handles its scheme.
        _ = try context.switchboard.requestTransaction([.start(uuid, handle: link.handle, video: link.video, provider: provider.id)], requester: requester)
        context.logger.info("link \(link.scheme): to \(provider.name)")
        return uuid.apiString
    }

    /// Do Not Disturb and its exceptions, as Manager properties that persist.
    private func screeningProperties() -> [Property] {
        typealias Manager = Telephony1.Manager
        let settings: [(PropertySpec<Bool>, WritableKeyPath<ScreeningSettings, Bool>)] = [
            (Manager.doNotDisturb, \.doNotDisturb), (Manager.doNotDisturbAllowFavorites, \.doNotDisturbAllowFavorites),
            (Manager.doNotDisturbAllowRepeatedCalls, \.doNotDisturbAllowRepeatedCalls), (Manager.silenceUnknownCallers, \.silenceUnknownCallers),
        ]
        return settings.map { spec, keyPath in
            property(spec, get: { manager in manager.context.screening.settings[keyPath: keyPath] }, set: { manager, enabled, call in
                manager.context.changeSettings({ $0[keyPath: keyPath] = enabled }, answer: call.answerLater())
            })
        } + [
            // Which Do Not Disturb is in force: ours, the desktop's, or none.
            property(Manager.doNotDisturbSource) { manager in manager.context.screening.doNotDisturbSource.rawValue },
            property(Manager.pausesMediaDuringCalls, get: { manager in
                manager.context.options.pausesMedia && manager.context.screening.settings.pausesMediaDuringCalls
            }, set: { manager, enabled, call in
                if enabled && !manager.context.options.pausesMedia {
                    throw DBusError(name: DBusError.Name.notSupported, message: "monkeycalld runs with --no-pause-media")
                }
                manager.context.changeSettings({ $0.pausesMediaDuringCalls = enabled }, answer: call.answerLater())
            }),
        ]
    }
}
