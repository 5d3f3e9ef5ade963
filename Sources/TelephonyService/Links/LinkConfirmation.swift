import DBus
import DesktopNotifications
import FoundationEssentials
import Localization
import MonkeyCallAPI
import TelephonyCore

/// Links ask first, as iOS does for every `tel:` link: `OpenURL` posts "Call bob with PyPhone?"
/// with Call and Cancel, and the provider gets its start action only after Call. When several apps
/// could take the link and the user has chosen none, it asks "Call bob with which app?" with one
/// button per app, and remembers the choice for the scheme. The question names the app that asked
/// when it is not the app that will call. Cancel, a dismissal or 60 s without an answer (on the
/// service's clock, whatever the server does with the notification's own timeout) start nothing.
@TelephonyActor
final class LinkConfirmation {
    static let expiry = 60
    /// Questions one app may have waiting: a link flood from one app must not bury the user's screen.
    static let maximumWaitingPerApp = 3
    /// The action of the button that calls with the app at this index of the choices.
    static func callAction(_ index: Int) -> String { index == 0 ? "call" : "call-\(index)" }

    /// A link to place, and the UUID its call will have.
    struct Link {
        let uuid: UUID
        let link: CallLink
    }

    /// A link waiting for the user's word.
    private struct Pending {
        let link: CallLink
        /// The apps the user may call with: one to confirm, or several to choose from.
        let choices: [Provider]
        let requester: String
        /// The app that asked: a sandboxed app's id, else the host connection.
        let asker: String
        let timeout: ScheduledTask
    }

    private let board: NotificationBoard?
    private let context: ServiceContext
    private let controller: CallControllerInterface
    private var pending: [UUID: Pending] = [:]

    /// `board`: nil when the daemon shows no notifications (then links cannot ask).
    init(board: NotificationBoard?, context: ServiceContext, controller: CallControllerInterface) {
        self.board = board
        self.context = context
        self.controller = controller
    }

    /// Asks the user whether to place `request` with `choices[0]`, or with which of `choices`.
    func ask(_ request: Link, choices: [Provider], requester: String) throws {
        let (uuid, handle) = (request.uuid, request.link.handle.value)
        guard let board, board.hasServer else {
            throw APIError.cannotAsk("there is no notification server to ask whether to call \(handle) with \(choices.map(\.name).joined(separator: " or ")); "
                                     + "to call without asking, use monkeycall dial \(handle) (or CallController.StartCall)")
        }
        // Checked now, so that a link that could never be placed fails at once rather than after Call.
        guard context.switchboard.call(uuid) == nil else { throw APIError.callUUIDAlreadyExists("call \(uuid.apiString) already exists") }
        let appID = context.appID(of: requester)
        let asker = appID.isEmpty ? requester : appID
        let waiting = pending.values.count { $0.asker == asker }
        guard waiting < Self.maximumWaitingPerApp else {
            throw DBusError.limitsExceeded("\(appID.isEmpty ? "this connection" : appID) already has \(waiting) links waiting for the user's answer; "
                                           + "the limit is \(Self.maximumWaitingPerApp)")
        }
        let timeout = context.switchboard.clock.schedule(after: Double(Self.expiry)) { [weak self] in self?.finish(uuid, choosing: nil) }
        pending[uuid] = Pending(link: request.link, choices: choices, requester: requester, asker: asker, timeout: timeout)
        board.post(question(request.link, choices: choices, askedBy: appID, key: Self.key(uuid)), by: self) { [weak self] event in
            var chosen: Int?
            if case .action(let action) = event { chosen = choices.indices.first { Self.callAction($0) == action } }
            self?.finish(uuid, choosing: chosen)
        }
    }

    static func key(_ uuid: UUID) -> String { "link-" + uuid.apiString }

    /// The question: "Call bob with APP?" (Call, Cancel), or "Call bob with which app?" (a button
    /// per app, Cancel). A sandboxed asker that is not the app that will call is named in the body.
    private func question(_ link: CallLink, choices: [Provider], askedBy appID: String, key: String) -> DesktopNotification {
        let handle = link.handle.value
        let labels = choices.map { AppNames.label(of: $0) }
        let asker = !appID.isEmpty && !(choices.count == 1 && choices[0].appID == appID) ? AppNames.label(appID: appID) : nil
        // TRANSLATORS: %1$s is an app's name, %2$s the number or address a link asks to call.
        let opening = asker.map { tr("%1$s asks to call %2$s.", $0, handle) } ?? tr("A link asks to call %1$s.", handle)
        var notification: DesktopNotification
        if choices.count == 1, let provider = choices.first {
            notification = DesktopNotification(key: key, appName: labels[0], summary: tr("Call %1$s with %2$s?", handle, labels[0]),
                                               body: NotificationText.sentences(opening, AppNames.chosenNameNote(of: provider, label: labels[0])))
            notification.iconName = provider.configuration.iconName
            notification.imagePNG = provider.configuration.iconData
            notification.desktopEntry = provider.configuration.desktopEntry
            notification.actions = [.init(Self.callAction(0), trc("button", "Call")), .init("cancel", trc("button", "Cancel"))]
        } else {
            notification = DesktopNotification(key: key, appName: "MonkeyCall", summary: tr("Call %1$s with which app?", handle),
                                               // TRANSLATORS: %1$s is a link scheme such as "tel"; "monkeycall links" is a command: keep it.
                                               body: NotificationText.sentences(opening, tr("The app you choose opens %1$s: links from now on; change it with monkeycall links.", link.scheme)))
            notification.actions = labels.indices.map { .init(Self.callAction($0), labels[$0]) } + [.init("cancel", trc("button", "Cancel"))]
        }
        notification.category = "call"
        notification.urgency = .critical
        notification.resident = true
        notification.namesAppInText = true
        notification.expiry = .seconds(Self.expiry)
        return notification
    }

    /// The user answered (or not, in time): the link is placed with the chosen app (a choice among
    /// several is remembered for the scheme) or forgotten, and its question goes.
    private func finish(_ uuid: UUID, choosing index: Int?) {
        guard let link = pending.removeValue(forKey: uuid) else { return }
        link.timeout.cancel()
        board?.withdraw(Self.key(uuid), by: self)
        guard let index else {
            context.logger.info("link to call \(uuid.apiString) not placed: cancelled, dismissed or unanswered")
            return
        }
        let provider = link.choices[index]
        if link.choices.count > 1 {
            try? context.linkClaims.choose(provider.appKey, for: link.link.scheme)
        }
        do {
            _ = try controller.request([.start(uuid, handle: link.link.handle, video: link.link.video, provider: provider.id)], from: link.requester)
        } catch {
            context.logger.warning("link confirmed but the call could not start: \(error)")
        }
    }
}
