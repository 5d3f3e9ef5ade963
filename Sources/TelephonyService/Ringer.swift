import DBus
import DesktopNotifications
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// Rings through desktop notifications: one notification per ringing call,
/// replaced in place when the call or the calls around it change, closed when
/// it stops ringing; a missed call leaves a "Missed call" notification.
/// Lives on the service's queue; button presses come back to it.
final class Ringer {
    private let notifier: Notifier
    private unowned let service: TelephonyService
    /// What is on screen, by notification key, so that an unchanged notification is not re-sent.
    private var posted: [String: DesktopNotification] = [:]

    init(notifier: Notifier, service: TelephonyService) {
        self.notifier = notifier
        self.service = service
    }

    /// Calls that are up and not on hold: they decide the extra buttons.
    private var active: [UUID: Call] = [:]
    private var ringing: [UUID: Call] = [:]

    /// The buttons a ringing notification gets depend on this.
    private var activeSummary: (any: Bool, allHold: Bool) {
        (!active.isEmpty, active.values.allSatisfy(\.supportsHolding))
    }

    /// A call was added or changed: its notification follows, and all ringing
    /// ones when the set of active calls changed their buttons.
    func update(_ call: Call) {
        let before = activeSummary
        let isUp = !call.onHold && [.active, .connecting, .dialing].contains(call.state)
        active[call.uuid] = isUp ? call : nil
        if call.state == .ringing {
            ringing[call.uuid] = call
        } else if ringing.removeValue(forKey: call.uuid) != nil {
            withdraw(call.uuid.apiString)
        }
        if before != activeSummary {
            ringing.values.forEach(postRinging)
        } else if call.state == .ringing {
            postRinging(call)
        }
    }

    /// A call ended: its notification goes; it leaves a missed-call
    /// notification when nobody answered it.
    func ended(_ call: Call) {
        update(call) // state ended: it leaves the ringing and active sets
        guard !call.outgoing, !call.wasAnswered, call.endReason == .unanswered else { return }
        let provider = service.switchboard.provider(call.provider)
        var notification = DesktopNotification(key: "missed-" + call.uuid.apiString, appName: call.providerName,
                                               summary: "Missed call", body: caller(call))
        notification.category = "call.unanswered"
        notification.iconName = provider?.configuration.iconName ?? ""
        notification.desktopEntry = provider?.configuration.desktopEntry ?? ""
        notification.actions = [.init("call-back", "Call back")]
        notification.expires = false
        post(notification)
    }

    /// The notification server went away: what it showed is gone with it.
    func serverVanished() {
        posted = [:]
        notifier.reset()
    }

    /// A notification server appeared: ring again for the calls still ringing.
    func serverAppeared() {
        posted = posted.filter { $0.key.hasPrefix("missed-") }
        ringing.values.forEach(postRinging)
    }

    private func withdraw(_ key: String) {
        posted[key] = nil
        notifier.withdraw(key)
    }

    private func postRinging(_ call: Call) {
        let notification = ringingNotification(call)
        if posted[notification.key] != notification { post(notification) }
    }

    private func ringingNotification(_ call: Call) -> DesktopNotification {
        let configuration = service.switchboard.provider(call.provider)?.configuration
        var notification = DesktopNotification(key: call.uuid.apiString, appName: call.providerName,
                                               summary: call.hasVideo ? "Incoming video call" : "Incoming call",
                                               body: caller(call))
        notification.category = "call.incoming"
        notification.urgency = .critical
        notification.resident = true
        notification.expires = false
        notification.iconName = configuration?.iconName ?? ""
        notification.imagePNG = configuration?.iconData ?? []
        notification.desktopEntry = configuration?.desktopEntry ?? ""
        let ringtone = configuration?.ringtoneSound ?? ""
        if ringtone.hasPrefix("/") { notification.soundFile = ringtone } else {
            notification.soundName = ringtone.isEmpty ? "phone-incoming-call" : ringtone
        }
        notification.actions = [.init("answer", "Answer"), .init("decline", "Decline")]
        let summary = activeSummary
        if summary.any {
            if summary.allHold { notification.actions.append(.init("hold-and-answer", "Hold & Answer")) }
            notification.actions.append(.init("end-and-answer", "End & Answer"))
        }
        return notification
    }

    /// "Name\nhandle", or the handle alone.
    private func caller(_ call: Call) -> String {
        let name = service.callerName(of: call)
        return name.isEmpty ? call.handle.value : "\(name)\n\(call.handle.value)"
    }

    private func post(_ notification: DesktopNotification) {
        posted[notification.key] = notification
        let key = notification.key
        notifier.post(notification) { [weak service] action in
            // From the notifier's thread back to the telephony queue.
            service?.connection.onQueue { service?.ringer?.invoked(action, key: key) }
        }
    }

    /// A button was pressed: it becomes the matching transaction.
    func invoked(_ action: String, key: String) {
        let switchboard = service.switchboard
        do {
            if key.hasPrefix("missed-") {
                posted[key] = nil
                guard action == "call-back" else { return }
                try service.callBack(missed: String(key.dropFirst("missed-".count)))
                return
            }
            guard let uuid = UUID(uuidString: key), let call = switchboard.call(uuid), call.state == .ringing else { return }
            switch action {
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
}
