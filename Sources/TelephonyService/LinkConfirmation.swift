import DBus
import DesktopNotifications
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// Links ask first, as iOS does for every `tel:` link: `OpenURL` posts "Call bob with PyPhone?"
/// with Call and Cancel, and the provider gets its start action only after Call. Cancel, a
/// dismissal or 60 s without an answer (on the service's clock, whatever the server does with the
/// notification's own timeout) start nothing. Lives on the service's queue.
final class LinkConfirmation {
    static let expiry = 60
    /// Questions one app may have waiting: a link flood from one app must not bury the user's screen.
    static let maximumWaitingPerApp = 3

    /// A link waiting for the user's word.
    private struct Pending {
        let start: ActionRequest
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

    /// Asks the user whether to place `start` (a start action for `uuid` at `provider`).
    func ask(_ start: ActionRequest, uuid: UUID, handle: Handle, provider: Provider, requester: String) throws {
        guard let board, board.hasServer else {
            throw APIError.cannotAsk("there is no notification server to ask whether to call \(handle.value) with \(provider.name); "
                                     + "to call without asking, use monkeycall dial \(handle.value) (or CallController.StartCall)")
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
        let timeout = context.switchboard.clock.schedule(after: Double(Self.expiry)) { [weak self] in self?.finish(uuid, placing: false) }
        pending[uuid] = Pending(start: start, requester: requester, asker: asker, timeout: timeout)
        let app = AppNames.label(of: provider)
        var notification = DesktopNotification(key: "link-" + uuid.apiString, appName: app,
                                               summary: "Call \(handle.value) with \(app)?",
                                               body: "A link asks to call \(handle.value)." + AppNames.chosenNameNote(of: provider, label: app))
        notification.category = "call"
        notification.urgency = .critical
        notification.resident = true
        notification.namesAppInText = true
        notification.expiry = .seconds(Self.expiry)
        notification.iconName = provider.configuration.iconName
        notification.imagePNG = provider.configuration.iconData
        notification.desktopEntry = provider.configuration.desktopEntry
        notification.actions = [.init("call", "Call"), .init("cancel", "Cancel")]
        board.post(notification, by: self) { [weak self] event in self?.finish(uuid, placing: event == .action("call")) }
    }

    /// The user answered (or not, in time): the link is placed or forgotten, and its question goes.
    private func finish(_ uuid: UUID, placing: Bool) {
        guard let link = pending.removeValue(forKey: uuid) else { return }
        link.timeout.cancel()
        board?.withdraw("link-" + uuid.apiString, by: self)
        guard placing else {
            context.logger.info("link to call \(uuid.apiString) not placed: cancelled, dismissed or unanswered")
            return
        }
        do {
            _ = try controller.request([link.start], from: link.requester)
        } catch {
            context.logger.warning("link confirmed but the call could not start: \(error)")
        }
    }
}
