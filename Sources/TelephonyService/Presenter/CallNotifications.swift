import DesktopNotifications
import FoundationEssentials
import Localization
import MonkeyCallAPI
import TelephonyCore

/// Every call's notification, owned here alone through the call's life (`CallNotification`): it
/// rings, becomes the ongoing-call card in place when the call is up, and leaves "Call ended" or
/// "Missed call" behind.
///
/// Bounded, so that no app can flood the desktop:
/// - at most `maximumRinging` ringing calls have a notification of their own. Beyond that, the
///   oldest ringing call of each app gets one in turn (an app that rings a hundred times cannot hide
///   another app's call), and one more notification counts the calls left out: they still ring and
///   can be answered from the app or `monkeycall answer`;
/// - likewise at most `maximumOngoing` calls that are up, and one more counting the rest;
/// - at most `maximumMissed` missed calls stay on screen (Recents keeps them all).
///
/// A ringing notification the user dismisses (×, or a click on servers without buttons) is posted
/// once more, silenced, so that Answer and Decline stay in reach; dismissed again, the call rings
/// on in its app only. `monkeycalld --no-call-controls` or the user's `ShowsCallControls` turn the
/// ongoing-call cards off.
@TelephonyActor
final class CallNotifications: SwitchboardObserver {
    static let maximumRinging = 3
    static let maximumOngoing = 3
    static let maximumMissed = 3
    static let moreRingingKey = "more-calls"
    static let moreOngoingKey = "more-ongoing-calls"
    static let endedExpiry = 5

    private let board: NotificationBoard
    private let service: ServiceContext
    /// Brings a call's app forward (its button, or a click on a ringing notification's body).
    private let showApp: AppActivation
    /// Plays the ringtone of the call that rings on screen first; nil: the notification server's sound.
    private let ringtone: CallRingtone?

    /// The calls that ring or are up.
    private var calls: [UUID: CallNotification] = [:]
    /// The ringing calls and the calls that are up, each fairly shared between apps.
    private var ringing = FairShare(limit: maximumRinging)
    private var ongoing = FairShare(limit: maximumOngoing)
    /// The calls chosen to have a ringing or ongoing notification of their own.
    private var shown: Set<UUID> = []
    /// Missed-call notifications on screen, oldest first, with the call for "Call back".
    private var missedShown: [(key: String, call: Call)] = []

    init(board: NotificationBoard, service: ServiceContext, showApp: AppActivation, ringtone: CallRingtone? = nil) {
        self.board = board
        self.service = service
        self.showApp = showApp
        self.ringtone = ringtone
        board.onServerAppeared { [weak self] in self?.show() }
    }

    private var showsOngoing: Bool { service.options.showsCallControls && service.screening.settings.showsCallControls }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded(let call), .callChanged(let call), .callRemoved(let call): follow(call)
        default: break
        }
    }

    /// `ShowsCallControls` or `PlaysRingtone` changed: the ongoing-call cards come or go, the ring
    /// starts or stops.
    func settingChanged() { show() }

    private func follow(_ call: Call) {
        let uuid = call.uuid
        // An ended call is told twice (its last change, then its removal): its end is followed once.
        guard calls[uuid] != nil || !call.hasEnded else { return }
        let notification = CallNotification(call, following: calls[uuid])
        let phase = notification?.phase
        calls[uuid] = phase == .ringing || phase == .ongoing ? notification : nil
        ringing.update(call, waiting: phase == .ringing)
        ongoing.update(call, waiting: phase == .ongoing)
        // A call that had its ongoing card leaves "Call ended" in its place (only where it had one:
        // the bound holds); any other's closes.
        if phase == .ended, shown.remove(uuid) != nil, showsOngoing, let notification {
            board.post(notification.ended(app: app(of: call), expiry: Self.endedExpiry), by: self) { _ in }
        }
        show()
        if phase == .missed, let notification { postMissed(notification) }
    }

    /// Brings the ringing and ongoing notifications on screen in line with the calls.
    private func show() {
        let ringingChosen = ringing.chosen
        let ongoingChosen = showsOngoing ? ongoing.chosen : []
        let chosen = Set(ringingChosen + ongoingChosen)
        for uuid in shown.subtracting(chosen) { board.withdraw(uuid.apiString, by: self) }
        shown = chosen

        for uuid in ringingChosen {
            guard let notification = calls[uuid], notification.dismissals < 2 else { continue }
            postRinging(notification)
        }
        for uuid in ongoingChosen {
            guard let notification = calls[uuid] else { continue }
            post(notification.ongoing(app: app(of: notification.call)), phase: .ongoing, call: uuid)
        }
        postCount(of: ringing, summary: Self.moreIncoming, key: Self.moreRingingKey, category: "call.incoming")
        // The first call that rings on screen, unsilenced, rings aloud (the call-waiting tone while
        // another is up); none does otherwise.
        let ringsAloud = playsRingtone ? ringingChosen.compactMap { calls[$0] }.first { !$0.call.silenced && $0.dismissals == 0 }?.call : nil
        ringtone?.follow(ringsAloud, waiting: !othersUp.isEmpty)
        // With the cards off, no count of them either.
        postCount(of: showsOngoing ? ongoing : nil, summary: Self.moreOngoing, key: Self.moreOngoingKey, category: "call.ongoing")
    }

    /// The calls that are up and not on hold: a ringing call's buttons depend on them (Hold & Answer,
    /// End & Answer), and it rings with the call-waiting tone while there are any.
    private var othersUp: [Call] { calls.values.map(\.call).filter { !$0.onHold && $0.state != .ringing } }

    /// The service rings itself: `monkeycalld --no-ringtone` and the user's `PlaysRingtone` false
    /// leave the sound to the notification server.
    private var playsRingtone: Bool { ringtone != nil && service.screening.settings.playsRingtone }

    private func postRinging(_ notification: CallNotification) {
        post(notification.ringing(othersUp: othersUp, app: app(of: notification.call), servicePlaysRingtone: playsRingtone),
             phase: .ringing, call: notification.call.uuid)
    }

    private func post(_ desktop: DesktopNotification, phase: CallNotification.Phase, call uuid: UUID) {
        board.post(desktop, by: self) { [weak self] event in self?.happened(event, phase: phase, call: uuid) }
    }

    /// "3 more incoming calls, Monkey: 2, SIP: 1", or nothing when all are shown (or `share` is nil).
    private func postCount(of share: FairShare?, summary: (Int) -> String, key: String, category: String) {
        guard let share, share.count > share.chosen.count else { return board.withdraw(key, by: self) }
        let count = share.count - share.chosen.count
        let body = share.leftOut { self.calls[$0]?.call.appDisplayName }
        board.postCount(count, summary: summary(count), body: body, key: key, category: category, by: self)
    }

    private static func moreIncoming(_ count: Int) -> String { trn("%d more incoming call", "%d more incoming calls", count) }
    private static func moreOngoing(_ count: Int) -> String { trn("%d more call", "%d more calls", count) }

    private func postMissed(_ notification: CallNotification) {
        let key = notification.key
        let call = notification.call
        board.post(notification.missed(app: app(of: call)), by: self) { [weak self] event in
            self?.missedEvent(event, key: key)
        }
        missedShown.append((key, call))
        if missedShown.count > Self.maximumMissed { board.withdraw(missedShown.removeFirst().key, by: self) }
    }

    private func app(of call: Call) -> ProviderConfiguration? { service.switchboard.provider(call.provider)?.configuration }

    // MARK: What the user does

    /// The user did something with a ringing or ongoing notification; `phase` is the one it was
    /// posted in, and a button of a phase the call has left does nothing.
    private func happened(_ event: NotificationEvent, phase: CallNotification.Phase, call uuid: UUID) {
        guard let notification = calls[uuid], notification.phase == phase else { return }
        switch event {
        case .action(let id):
            press(id, on: notification)
        case .dismissed where phase == .ringing:
            // Dismissed: its ringtone stops (the call rings on, silently).
            try? service.switchboard.silence(uuid)
            calls[uuid]?.dismissed()
            if let again = calls[uuid], again.dismissals == 1, shown.contains(uuid) { postRinging(again) }
        case .dismissed, .expired:
            break
        }
    }

    /// A missed-call notification was pressed or closed: it goes, and "Call back" calls back.
    private func missedEvent(_ event: NotificationEvent, key: String) {
        guard let index = missedShown.firstIndex(where: { $0.key == key }) else { return }
        let call = missedShown.remove(at: index).call
        board.withdraw(key, by: self)
        guard case .action(let id) = event, let missed = CallNotification(call) else { return }
        press(id, on: missed)
    }

    /// A button becomes what the table says it does.
    private func press(_ id: String, on notification: CallNotification) {
        guard let button = CallNotification.Button.byAction[notification.phase]?[id] else { return }
        let call = notification.call
        let opensApp = !(app(of: call)?.desktopEntry.isEmpty ?? true)
        // The other calls (every live call, sorted) only for End & Answer.
        switch button.effect(on: call, opensApp: opensApp, others: service.switchboard.calls.filter { $0.uuid != call.uuid }) {
        case .showApp:
            showApp.show(call)
        case .showCall(let otherwise):
            service.askPhone(PhoneApp.Action.showCall, call.uuid.apiString) { [weak self] in
                guard !otherwise.isEmpty else { return }
                self?.request(otherwise, for: id)
            }
        case .silence:
            try? service.switchboard.silence(call.uuid)
        case .transaction(let requests):
            request(requests, for: id)
        }
    }

    private func request(_ requests: [ActionRequest], for id: String) {
        do {
            _ = try service.switchboard.requestTransaction(requests, requester: nil)
        } catch {
            service.logger.warning("notification action '\(id)' failed: \(error)")
        }
    }
}
