import DBus
import FoundationEssentials
import MonkeyCallAPI
import PeerIdentity
import TelephonyCore

/// `Manager` on the root object: providers register, links are opened, and the user's
/// Do Not Disturb and media settings are read and written as properties that persist.
@TelephonyActor
final class ManagerObject: ServiceObject {
    private let context: ServiceContext
    private let providers: ProviderObjects
    private let controller: CallControllerInterface
    /// Links ask the user first.
    private let links: LinkConfirmation
    /// Told when `ShowsCallControls` or `PlaysRingtone` changes; nil without notifications.
    private let callNotifications: CallNotifications?

    init(context: ServiceContext, providers: ProviderObjects, controller: CallControllerInterface, links: LinkConfirmation, callNotifications: CallNotifications?) {
        self.context = context
        self.providers = providers
        self.controller = controller
        self.links = links
        self.callNotifications = callNotifications
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
            method(Manager.subscribe) { manager, call in
                let limits = manager.context.options.limits
                let caller = call.caller ?? Caller(name: call.sender, app: .host)
                if let refusal = manager.context.objects.subscribe(caller, within: SubscriptionLimits(perAccount: limits.maximumSubscriptionsPerApp,
                                                                                                      unconfined: limits.maximumHostSubscriptions,
                                                                                                      total: limits.maximumSubscriptions)) {
                    throw DBusError.limitsExceeded("Subscribe: \(ServiceAccessPolicy.explain(refusal, of: caller, limits: limits)).")
                }
            }
            method(Manager.unsubscribe) { manager, call in manager.context.objects.unsubscribe(call.sender) }
            Signal(Manager.subscriptionDropped)
            Property(Manager.version) { Telephony1.version }
            screeningProperties()
        }
    }

    /// A link becomes a start action at the app that handles its scheme, once the user says Call.
    func openURL(_ url: String, from requester: String) throws -> String {
        let link: CallLink
        do {
            link = try CallLink(parsing: url)
        } catch {
            throw APIError.invalidURL(error.description)
        }
        let choices: [Provider]
        switch context.switchboard.route(link, holder: context.linkClaims.handlers[link.scheme]) {
        case .app(let provider): choices = [provider]
        case .choose(let providers): choices = providers
        case .none(let holder?):
            throw APIError.noProvider("\(holder) opens \(link.scheme): links and is not running; start it, or choose another app with monkeycall links \(link.scheme) APP")
        case .none(nil):
            let wanted = link.scheme == "tel" ? "takes phone numbers or declares URLSchemes [\"tel\"]" : "declares URLSchemes [\"\(link.scheme)\"]"
            throw APIError.noProvider("no app for \(link.scheme): links is running (none \(wanted))")
        }
        let uuid = UUID()
        // Not kept to the opener's own providers: a link is for whichever app handles its scheme.
        try links.ask(LinkConfirmation.Link(uuid: uuid, link: link), choices: choices, requester: requester)
        context.logger.info("link \(link.scheme): to \(choices.map(\.appKey).joined(separator: " or ")), asking first")
        return uuid.apiString
    }

    /// Do Not Disturb and its exceptions, as Manager properties that persist.
    private func screeningProperties() -> [Property] {
        typealias Manager = Telephony1.Manager
        let settings: [(PropertySpec<Bool>, WritableKeyPath<ScreeningSettings, Bool>)] = [
            (Manager.doNotDisturb, \.doNotDisturb), (Manager.doNotDisturbAllowFavorites, \.doNotDisturbAllowFavorites),
            (Manager.doNotDisturbAllowContacts, \.doNotDisturbAllowContacts),
            (Manager.doNotDisturbAllowRepeatedCalls, \.doNotDisturbAllowRepeatedCalls), (Manager.silenceUnknownCallers, \.silenceUnknownCallers),
        ]
        return settings.map { spec, keyPath in
            property(spec, get: { manager in manager.context.screening.settings[keyPath: keyPath] }, set: { manager, enabled, call in
                manager.context.changeSettings({ $0[keyPath: keyPath] = enabled }, answer: call.answerLater())
            })
        } + [
            // Which Do Not Disturb is in force: ours, the desktop's, or none.
            property(Manager.doNotDisturbSource) { manager in manager.context.screening.doNotDisturbSource.rawValue },
            feature(Manager.pausesMediaDuringCalls, option: \.pausesMedia, setting: \.pausesMediaDuringCalls, flag: "--no-pause-media"),
            feature(Manager.showsCallControls, option: \.showsCallControls, setting: \.showsCallControls, flag: "--no-call-controls",
                    changed: Self.notificationsFollow),
            feature(Manager.playsRingtone, option: \.playsRingtone, setting: \.playsRingtone, flag: "--no-ringtone",
                    changed: Self.notificationsFollow),
        ]
    }

    /// The call cards and the ring follow a setting that changed.
    private static func notificationsFollow(_ manager: ManagerObject) { manager.callNotifications?.settingChanged() }

    /// A feature the user turns on and off (persisted) that a daemon option can turn off for good:
    /// then it reads false and refuses true, naming the option.
    private func feature(_ spec: PropertySpec<Bool>, option: KeyPath<ServiceOptions, Bool>, setting: WritableKeyPath<ScreeningSettings, Bool>,
                         flag: String, changed: @escaping (ManagerObject) -> Void = { _ in }) -> Property {
        property(spec, get: { manager in
            manager.context.options[keyPath: option] && manager.context.screening.settings[keyPath: setting]
        }, set: { manager, enabled, call in
            if enabled && !manager.context.options[keyPath: option] {
                throw DBusError(name: DBusError.Name.notSupported, message: "monkeycalld runs with \(flag)")
            }
            manager.context.changeSettings({ $0[keyPath: setting] = enabled }, answer: call.answerLater())
            changed(manager)
        })
    }
}
