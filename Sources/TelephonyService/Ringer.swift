import DBus
import DesktopNotifications
import ScreenText
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// Rings through desktop notifications: one notification per ringing call,
/// replaced in place when the call or the calls around it change, closed when
/// it stops ringing (or taken over in place by the call controls when it is
/// answered); a missed call leaves a "Missed call" notification.
///
/// Bounded, so that no app can flood the desktop: at most
/// `maximumRingingNotifications` ringing calls have a notification of their
/// own. Beyond that, the oldest ringing call of each app gets one in turn (an
/// app that rings a hundred times cannot hide another app's call), and one
/// more notification counts the calls left out: they still ring and can be
/// answered from the app or `monkeycall answer`, and the next one takes a
/// notification when one of those shown stops ringing. At most
/// `maximumMissedNotifications` missed calls stay on screen (Recents keeps
/// them all). So at most 3 + 1 + 3 notifications are on screen at once.
///
/// A ringing notification the user dismisses (×, or a click on servers without buttons) is posted
/// once more, silenced, so that Answer and Decline stay in reach; dismissed again, the call rings
/// on in its app only.
///
/// Its state lives on the service's queue.
final class Ringer: SwitchboardObserver {
    static let maximumRingingNotifications = 3
    static let maximumMissedNotifications = 3
    static let moreCallsKey = "more-calls"

    private let board: NotificationBoard
    private let service: ServiceContext
    /// Brings a call's app forward (the `default` action where the app has a desktop entry).
    private let showApp: AppActivation

    /// What missed calls were, for "Call back": provider and handle by call UUID.
    private var missedCalls: [String: (provider: ProviderID, handle: Handle)] = [:]

    init(board: NotificationBoard, service: ServiceContext, showApp: AppActivation) {
        self.board = board
        self.service = service
        self.showApp = showApp
        board.onServerAppeared { [weak self] in self?.showRinging() }
    }

    /// Calls that are up and not on hold: they decide the extra buttons.
    private var active: [UUID: Call] = [:]
    private var ringing: [UUID: Call] = [:]
    /// The ringing calls, fairly shared between apps.
    private var queue = FairShare()
    /// The ringing calls that have a notification of their own.
    private var shown: [UUID] = []
    /// Ringing calls the user dismissed: once (posted again, silenced) or twice (left to their app).
    private var dismissed: [UUID: Int] = [:]
    /// Missed-call notification keys on screen, oldest first.
    private var missedShown: [String] = []

    /// The buttons a ringing notification gets depend on this.
    private var activeSummary: (any: Bool, allHold: Bool) {
        (!active.isEmpty, active.values.allSatisfy(\.supportsHolding))
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded(let call), .callChanged(let call): update(call)
        case .callRemoved(let call): ended(call)
        default: break
        }
    }

    /// A call was added or changed: its notification follows, and the others
    /// when it changed which calls are shown or which buttons they offer.
    func update(_ call: Call) {
        let isUp = !call.onHold && [.active, .connecting, .dialing].contains(call.state)
        active[call.uuid] = isUp ? call : nil
        if call.state == .ringing {
            ringing[call.uuid] = call
            queue.insert(call)
        } else if ringing.removeValue(forKey: call.uuid) != nil {
            queue.remove(call.uuid)
            dismissed[call.uuid] = nil
        }
        showRinging()
    }

    /// A call ended: its notification goes; it leaves a missed-call
    /// notification when nobody answered it.
    func ended(_ call: Call) {
        update(call) // state ended: it leaves the ringing and active sets
        guard !call.outgoing, !call.wasAnswered, call.endReason == .unanswered else { return }
        rememberMissed(call)
        let provider = service.switchboard.provider(call.provider)
        var notification = DesktopNotification(key: "missed-" + call.uuid.apiString, appName: call.providerName,
                                               summary: "Missed call",
                                               body: NotificationText.caller(call, service) + "\n" + NotificationText.when(call.startedAt))
        notification.category = "call.unanswered"
        notification.iconName = provider?.configuration.iconName ?? ""
        notification.desktopEntry = provider?.configuration.desktopEntry ?? ""
        notification.actions = [.init("call-back", "Call back")]
        // The server's own timeout: on servers that show one notification at a time, a missed
        // call that never expired would hide the next ringing one. Those with a history keep it.
        notification.expiry = .serverDefault
        let key = notification.key
        board.post(notification, by: self) { [weak self] event in self?.missedEvent(event, key: key) }
        missedShown.append(key)
        if missedShown.count > Self.maximumMissedNotifications { board.withdraw(missedShown.removeFirst(), by: self) }
    }

    /// Brings the ringing notifications on screen in line with the ringing calls.
    private func showRinging() {
        let chosen = queue.choose(limit: Self.maximumRingingNotifications)
        let chosenSet = Set(chosen)
        for uuid in shown where !chosenSet.contains(uuid) { board.withdraw(uuid.apiString, by: self) }
        shown = chosen
        for uuid in chosen { if let call = ringing[uuid], dismissed[uuid, default: 0] < 2 { postRinging(call) } }
        board.postCount(ringing.count - chosen.count, of: "incoming call", body: queue.leftOut(shown: shown) { self.ringing[$0]?.providerName },
                        key: Self.moreCallsKey, category: "call.incoming", by: self)
    }

    private func postRinging(_ call: Call) {
        let uuid = call.uuid
        board.post(ringingNotification(call), by: self) { [weak self] event in self?.ringingEvent(event, call: uuid) }
    }

    private func ringingNotification(_ call: Call) -> DesktopNotification {
        let configuration = service.switchboard.provider(call.provider)?.configuration
        var notification = DesktopNotification(key: call.uuid.apiString, appName: call.providerName,
                                               summary: call.hasVideo ? "Incoming video call" : "Incoming call",
                                               body: NotificationText.caller(call, service))
        notification.category = "call.incoming"
        notification.urgency = .critical
        notification.resident = true
        notification.expiry = .never
        notification.iconName = configuration?.iconName ?? ""
        notification.imagePNG = configuration?.iconData ?? []
        notification.desktopEntry = configuration?.desktopEntry ?? ""
        let ringtone = configuration?.ringtoneSound ?? ""
        if ringtone.hasPrefix("/") { notification.soundFile = ringtone } else {
            notification.soundName = ringtone.isEmpty ? "phone-incoming-call" : ringtone
        }
        // Posted again after a dismissal: silently.
        notification.suppressesSound = dismissed[call.uuid] != nil
        notification.actions = [.init("answer", "Answer"), .init("decline", "Decline")]
        let summary = activeSummary
        if summary.any {
            if summary.allHold { notification.actions.append(.init("hold-and-answer", "Hold & Answer")) }
            notification.actions.append(.init("end-and-answer", "End & Answer"))
        }
        // A click on the body (servers such as dunst close on a click and hide the buttons in a
        // menu): the app comes forward where it has a desktop entry, else the call is answered.
        notification.actions.append(.init("default", notification.desktopEntry.isEmpty ? "Answer" : "Open \(call.providerName)"))
        return notification
    }

    /// The user did something with a ringing call's notification.
    private func ringingEvent(_ event: NotificationEvent, call uuid: UUID) {
        guard let call = ringing[uuid] else { return }
        switch event {
        case .action(let action):
            invoked(action, on: call)
        case .dismissed:
            dismissed[uuid, default: 0] += 1
            if dismissed[uuid] == 1, shown.contains(uuid) { postRinging(call) }
        case .expired:
            break
        }
    }

    /// A button was pressed: it becomes the matching transaction.
    private func invoked(_ action: String, on call: Call) {
        let switchboard = service.switchboard
        let uuid = call.uuid
        do {
            switch action {
            case "default" where !(service.switchboard.provider(call.provider)?.configuration.desktopEntry.isEmpty ?? true):
                showApp.show(call)
            // Answering holds (or ends) the other active calls by itself: the switchboard arbitrates.
            case "answer", "hold-and-answer", "default":
                _ = try switchboard.requestTransaction([.answer(uuid)], requester: nil)
            case "decline":
                _ = try switchboard.requestTransaction([.end(uuid)], requester: nil)
            case "end-and-answer":
                let others = switchboard.calls.filter { $0.uuid != uuid && $0.state != .ringing && $0.state != .ended }
                _ = try switchboard.requestTransaction(others.map { .end($0.uuid) } + [.answer(uuid)], requester: nil)
            default:
                return
            }
        } catch {
            service.logger.warning("notification action '\(action)' failed: \(error)")
        }
    }

    /// A missed-call notification was pressed or closed.
    private func missedEvent(_ event: NotificationEvent, key: String) {
        missedShown.removeAll { $0 == key }
        board.withdraw(key, by: self)
        guard event == .action("call-back") else { return }
        do {
            try callBack(missed: String(key.dropFirst("missed-".count)))
        } catch {
            service.logger.warning("notification action 'call-back' failed: \(error)")
        }
    }

    private func rememberMissed(_ call: Call) {
        // Bounded: a "Call back" on a very old missed call simply does nothing.
        if missedCalls.count >= 256, let oldest = missedCalls.keys.first { missedCalls[oldest] = nil }
        missedCalls[call.uuid.apiString] = (call.provider, call.handle)
    }

    /// "Call back" on a missed call: a call to the same handle through the same provider.
    private func callBack(missed uuid: String) throws {
        guard let missed = missedCalls.removeValue(forKey: uuid) else { return }
        _ = try service.switchboard.requestTransaction([.start(UUID(), handle: missed.handle, provider: missed.provider)], requester: nil)
    }
}
