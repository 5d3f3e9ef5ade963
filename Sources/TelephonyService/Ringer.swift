import DBus
import DesktopNotifications
import ScreenText
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// Rings through desktop notifications: one notification per ringing call,
/// replaced in place when the call or the calls around it change, closed when
/// it stops ringing; a missed call leaves a "Missed call" notification.
/// Lives on the service's queue; button presses come back to it.
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
/// Its state lives on the service's queue: button presses are sent back to it from the
/// notifier's thread (hence `@unchecked`).
final class Ringer: SwitchboardObserver, @unchecked Sendable {
    static let maximumRingingNotifications = 3
    static let maximumMissedNotifications = 3
    static let moreCallsKey = "more-calls"

    private let notifier: Notifier
    private let service: ServiceContext
    /// What is on screen, by notification key, so that an unchanged notification is not re-sent.
    private var posted: [String: DesktopNotification] = [:]

    /// What missed calls were, for "Call back": provider and handle by call UUID.
    private var missedCalls: [String: (provider: ProviderID, handle: Handle)] = [:]

    init(notifier: Notifier, service: ServiceContext) {
        self.notifier = notifier
        self.service = service
    }

    /// Calls that are up and not on hold: they decide the extra buttons.
    private var active: [UUID: Call] = [:]
    private var ringing: [UUID: Call] = [:]
    /// Each app's ringing calls, oldest first, and when each started ringing.
    private var ringingByProvider: [ProviderID: [UUID]] = [:]
    private var ringingSince: [UUID: UInt64] = [:]
    private var ringSequence: UInt64 = 0
    /// The ringing calls that have a notification of their own.
    private var shown: [UUID] = []
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
            if ringing.updateValue(call, forKey: call.uuid) == nil {
                ringSequence += 1
                ringingSince[call.uuid] = ringSequence
                ringingByProvider[call.provider, default: []].append(call.uuid)
            }
        } else if ringing.removeValue(forKey: call.uuid) != nil {
            ringingSince[call.uuid] = nil
            ringingByProvider[call.provider]?.removeAll { $0 == call.uuid }
            if ringingByProvider[call.provider]?.isEmpty == true { ringingByProvider[call.provider] = nil }
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
                                               summary: "Missed call", body: caller(call))
        notification.category = "call.unanswered"
        notification.iconName = provider?.configuration.iconName ?? ""
        notification.desktopEntry = provider?.configuration.desktopEntry ?? ""
        notification.actions = [.init("call-back", "Call back")]
        notification.expires = false
        post(notification)
        missedShown.append(notification.key)
        if missedShown.count > Self.maximumMissedNotifications { withdraw(missedShown.removeFirst()) }
    }

    /// Brings the ringing notifications on screen in line with the ringing calls.
    private func showRinging() {
        let chosen = chooseShown()
        let chosenSet = Set(chosen)
        for uuid in shown where !chosenSet.contains(uuid) { withdraw(uuid.apiString) }
        shown = chosen
        for uuid in chosen { if let call = ringing[uuid] { postRinging(call) } }
        let left = ringing.count - chosen.count
        if left > 0 {
            let notification = moreCallsNotification(left)
            if posted[notification.key] != notification { post(notification) }
        } else if posted[Self.moreCallsKey] != nil {
            withdraw(Self.moreCallsKey)
        }
    }

    /// The ringing calls to show: every app's oldest call, apps in the order
    /// their calls started ringing, then every app's second call, and so on.
    private func chooseShown() -> [UUID] {
        let limit = Self.maximumRingingNotifications
        guard ringing.count > limit else { return ringingByProvider.values.flatMap { $0 }.sorted { ringingSince[$0]! < ringingSince[$1]! } }
        // Only the `limit` apps with the oldest calls can matter: pick them without sorting them all.
        var apps: [[UUID]] = []
        for calls in ringingByProvider.values {
            apps.append(calls)
            apps.sort { ringingSince[$0[0]]! < ringingSince[$1[0]]! }
            if apps.count > limit { apps.removeLast() }
        }
        var chosen: [UUID] = []
        var round = 0
        while chosen.count < limit {
            for calls in apps where round < calls.count && chosen.count < limit { chosen.append(calls[round]) }
            round += 1
        }
        return chosen
    }

    /// "3 more incoming calls", with the apps they come from.
    private func moreCallsNotification(_ count: Int) -> DesktopNotification {
        var shownPerApp: [ProviderID: Int] = [:]
        for uuid in shown { if let call = ringing[uuid] { shownPerApp[call.provider, default: 0] += 1 } }
        var perApp: [(name: String, count: Int)] = []
        for (provider, calls) in ringingByProvider {
            let waiting = calls.count - shownPerApp[provider, default: 0]
            if waiting > 0, let first = ringing[calls[0]] { perApp.append((first.providerName, waiting)) }
        }
        perApp.sort { ($0.count, $1.name) > ($1.count, $0.name) }
        var body = perApp.prefix(3).map { "\($0.name): \($0.count)" }.joined(separator: ", ")
        if perApp.count > 3 { body += " and \(perApp.count - 3) more apps" }
        var notification = DesktopNotification(key: Self.moreCallsKey, appName: "MonkeyCall",
                                               summary: count == 1 ? "1 more incoming call" : "\(count) more incoming calls", body: body)
        notification.category = "call.incoming"
        notification.expires = false
        return notification
    }

    /// The notification server went away: what it showed is gone with it.
    func serverVanished() {
        posted = [:]
        missedShown = []
        notifier.reset()
    }

    /// A notification server appeared: ring again for the calls still ringing.
    func serverAppeared() {
        posted = posted.filter { $0.key.hasPrefix("missed-") }
        showRinging()
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

    /// "Name\nhandle", or the handle alone. Each part is cleaned before they are joined, so that a
    /// newline inside a caller name cannot fake a line of its own.
    private func caller(_ call: Call) -> String {
        let name = ScreenText.clean(service.callerName(of: call))
        let handle = ScreenText.clean(call.handle.value)
        return name.isEmpty ? handle : "\(name)\n\(handle)"
    }

    private func post(_ notification: DesktopNotification) {
        posted[notification.key] = notification
        let key = notification.key
        let connection = service.connection
        notifier.post(notification) { [weak self] action in
            // From the notifier's thread back to the telephony queue.
            connection.onQueue { self?.invoked(action, key: key) }
        }
    }

    /// A button was pressed: it becomes the matching transaction.
    func invoked(_ action: String, key: String) {
        let switchboard = service.switchboard
        do {
            if key.hasPrefix("missed-") {
                posted[key] = nil
                missedShown.removeAll { $0 == key }
                guard action == "call-back" else { return }
                try callBack(missed: String(key.dropFirst("missed-".count)))
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
