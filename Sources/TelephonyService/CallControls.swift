import DesktopNotifications
import Foundation
import TelephonyCore

/// The in-call screen as a notification: every call that is up (dialing, connecting, active,
/// held) has an ongoing-call notification with Hang Up, Mute/Unmute, Hold/Resume and the app's
/// own button, taking the ringing notification's place (same key, so the same id at the server).
/// It is replaced in place on every change and closed when the call ends; a call that had
/// connected leaves "Call ended · M:SS" for 5 s instead. Bounded like ringing: at most
/// `maximumOwnNotifications` calls have one, shared fairly between apps, and one more counts the rest.
///
/// `urgency` 1, never 2: it must not break through Do Not Disturb the way a ringing call may.
/// Lives on the service's queue.
final class CallControls: SwitchboardObserver {
    static let maximumOwnNotifications = 3
    static let moreCallsKey = "more-ongoing-calls"
    static let endedExpiry = 5

    private let board: NotificationBoard
    private let service: ServiceContext
    private let showApp: AppActivation
    private var up: [UUID: Call] = [:]
    private var queue = FairShare()
    private var shown: [UUID] = []

    init(board: NotificationBoard, service: ServiceContext, showApp: AppActivation) {
        self.board = board
        self.service = service
        self.showApp = showApp
        board.onServerAppeared { [weak self] in self?.showOngoing() }
    }

    /// `monkeycalld --no-call-controls` turns it off for good, `ShowsCallControls` as the user likes.
    var enabled: Bool { service.options.showsCallControls && service.screening.settings.showsCallControls }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded(let call), .callChanged(let call), .callRemoved(let call): update(call)
        default: break
        }
    }

    /// The setting changed: the notifications come or go.
    func settingChanged() {
        if !enabled {
            for uuid in shown { board.withdraw(uuid.apiString, by: self) }
            board.withdraw(Self.moreCallsKey, by: self)
            shown = []
        }
        showOngoing()
    }

    private func update(_ call: Call) {
        if [.dialing, .connecting, .active, .held].contains(call.state) {
            up[call.uuid] = call
            queue.insert(call)
        } else if up.removeValue(forKey: call.uuid) != nil {
            queue.remove(call.uuid)
            if let index = shown.firstIndex(of: call.uuid) {
                shown.remove(at: index)
                // A call that had connected leaves "Call ended" in place of its notification
                // (only where it had one: the bound holds); any other's just closes.
                if call.hasEnded && call.hasConnected { postEnded(call) } else { board.withdraw(call.uuid.apiString, by: self) }
            }
        }
        showOngoing()
    }

    private func postEnded(_ call: Call) {
        var notification = DesktopNotification(key: call.uuid.apiString, appName: call.providerName,
                                               summary: "Call ended · " + NotificationText.duration(call.endedAt - min(call.endedAt, call.connectedAt)),
                                               body: NotificationText.caller(call, service))
        notification.category = "call.ended"
        notification.expiry = .seconds(Self.endedExpiry)
        configure(&notification, for: call)
        board.post(notification, by: self) { _ in }
    }

    /// Brings the ongoing notifications on screen in line with the calls that are up.
    private func showOngoing() {
        guard enabled else { return }
        let chosen = queue.choose(limit: Self.maximumOwnNotifications)
        let chosenSet = Set(chosen)
        for uuid in shown where !chosenSet.contains(uuid) { board.withdraw(uuid.apiString, by: self) }
        shown = chosen
        for uuid in chosen {
            guard let call = up[uuid] else { continue }
            board.post(ongoing(call), by: self) { [weak self] event in self?.pressed(event, call: uuid) }
        }
        board.postCount(up.count - chosen.count, of: "call", body: queue.leftOut(shown: shown) { self.up[$0]?.providerName },
                        key: Self.moreCallsKey, category: "call.ongoing", by: self)
    }

    /// "Call with Alice", its handle, app, since when and whether muted, and the buttons.
    private func ongoing(_ call: Call) -> DesktopNotification {
        let who = NotificationText.who(call, service)
        let summary = switch call.state {
        case .dialing, .connecting: "Calling \(who)…"
        case .held: "\(who) — on hold"
        default: "Call with \(who)"
        }
        var lines = [call.handle.value, call.providerName]
        let since = call.connectedAt > 0 ? call.connectedAt : call.startedAt
        lines.append(NotificationText.since(since))
        if call.muted { lines.append("muted") }
        var notification = DesktopNotification(key: call.uuid.apiString, appName: call.providerName, summary: summary,
                                               body: lines.joined(separator: "\n"))
        notification.category = "call.ongoing"
        notification.resident = true
        notification.expiry = .never
        configure(&notification, for: call)
        notification.actions = [.init("hang-up", "Hang Up"), call.muted ? .init("unmute", "Unmute") : .init("mute", "Mute")]
        if call.supportsHolding { notification.actions.append(call.onHold ? .init("resume", "Resume") : .init("hold", "Hold")) }
        if !notification.desktopEntry.isEmpty { notification.actions.append(.init("show-app", "Open \(call.providerName)")) }
        return notification
    }

    /// What every notification of a call carries: the app's icon and desktop entry; the app is named in the text.
    private func configure(_ notification: inout DesktopNotification, for call: Call) {
        let configuration = service.switchboard.provider(call.provider)?.configuration
        notification.urgency = .normal
        notification.namesAppInText = notification.category == "call.ongoing"
        notification.iconName = configuration?.iconName ?? ""
        notification.imagePNG = configuration?.iconData ?? []
        notification.desktopEntry = configuration?.desktopEntry ?? ""
    }

    /// A button: the matching transaction, as the ringing buttons are.
    private func pressed(_ event: NotificationEvent, call uuid: UUID) {
        guard case .action(let action) = event, let call = up[uuid] else { return }
        let request: ActionRequest
        switch action {
        case "hang-up": request = .end(uuid)
        case "mute": request = .setMuted(uuid, true)
        case "unmute": request = .setMuted(uuid, false)
        case "hold": request = .setHeld(uuid, true)
        // Resuming holds (or ends) the other active calls: the switchboard arbitrates.
        case "resume": request = .setHeld(uuid, false)
        case "show-app":
            showApp.show(call)
            return
        default: return
        }
        do {
            _ = try service.switchboard.requestTransaction([request], requester: nil)
        } catch {
            service.logger.warning("notification action '\(action)' failed: \(error)")
        }
    }
}
