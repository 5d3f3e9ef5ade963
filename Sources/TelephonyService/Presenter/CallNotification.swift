import DesktopNotifications
import FoundationEssentials
import Localization
import TelephonyCore

/// One call's notification through the call's life, a state machine derived from the call: it
/// rings, it is up (the in-call card, which takes the ringing notification's place under the same
/// key, so the same id at the server), and when the call ends it leaves "Call ended · M:SS" (a call
/// that connected) or "Missed call" (an incoming call nobody answered), or nothing. It builds what
/// the desktop shows in each phase; `CallNotifications` decides which calls get one on screen.
@TelephonyActor
struct CallNotification {
    private(set) var call: Call
    private(set) var phase: Phase
    /// How often the user dismissed it while it rang: once, it is posted again silenced; twice, the
    /// call rings on in its app only.
    private(set) var dismissals = 0

    /// Nil when `call` is in no phase that shows anything.
    init?(_ call: Call) {
        guard let phase = Phase(call) else { return nil }
        self.call = call
        self.phase = phase
    }

    /// The call changed; false when it left the phases that show anything. A dismissal counts for
    /// the ringing only.
    mutating func follow(_ call: Call) -> Bool {
        guard let phase = Phase(call) else { return false }
        if phase != .ringing { dismissals = 0 }
        self.call = call
        self.phase = phase
        return true
    }

    mutating func dismissed() { dismissals += 1 }

    var key: String { phase == .missed ? "missed-" + call.uuid.apiString : call.uuid.apiString }

    // MARK: What the desktop shows

    /// "Incoming call", ringing with the app's sound (silenced once dismissed), urgent.
    /// `servicePlaysRingtone`: the service plays the ringtone itself (`CallRingtone`): the server
    /// plays none, and a Silence button stops it while it plays.
    func ringing(othersUp: [Call], app: ProviderConfiguration?, servicePlaysRingtone: Bool = false) -> DesktopNotification {
        var notification = base(summary: call.hasVideo ? tr("Incoming video call") : tr("Incoming call"),
                                body: NotificationText.caller(call), category: "call.incoming", app: app)
        notification.urgency = .critical
        notification.resident = true
        notification.expiry = .never
        notification.suppressesSound = servicePlaysRingtone || dismissals > 0
        // A server's sound only when the service does not ring: GNOME Shell 43 reads no
        // suppress-sound and would play a sound it is given on top of the service's ring.
        let ringtone = app?.ringtoneSound ?? ""
        if !notification.suppressesSound {
            if ringtone.hasPrefix("/") { notification.soundFile = ringtone } else {
                notification.soundName = ringtone.isEmpty ? "phone-incoming-call" : ringtone
            }
        }
        let silence = servicePlaysRingtone && !call.silenced && dismissals == 0
        notification.actions = actions(Button.ringing(othersUp: othersUp, silence: silence), opensApp: !notification.desktopEntry.isEmpty)
        return notification
    }

    /// "Call with Alice", its handle, app, since when and whether muted, and the buttons. `urgency` 1,
    /// never 2: it must not break through Do Not Disturb the way a ringing call may.
    func ongoing(app: ProviderConfiguration?) -> DesktopNotification {
        let who = NotificationText.who(call)
        let summary = switch call.state {
        // TRANSLATORS: %1$s is the caller's name or number.
        case .dialing, .connecting: tr("Calling %1$s…", who)
        // TRANSLATORS: %1$s is the caller's name or number.
        case .held: tr("%1$s — on hold", who)
        // TRANSLATORS: %1$s is the caller's name or number.
        default: tr("Call with %1$s", who)
        }
        // The handle once: not under a name it repeats ("Call with Bob", not "bob" again).
        let handle = NotificationText.repeats(who, call.handle.value) && who != call.handle.value ? "" : call.handle.value
        var facts = [NotificationText.since(call.connectedAt > 0 ? call.connectedAt : call.startedAt)]
        if call.muted { facts.append(tr("muted")) }
        // Lines: the handle, the app (servers before GNOME Shell 46 draw it nowhere else), since
        // when, muted. One line where the header names the app: "+1 408 555 0142 · since 14:02".
        let lines = [handle, call.appDisplayName] + facts
        var notification = base(summary: summary, body: lines.filter { !$0.isEmpty }.joined(separator: "\n"), category: "call.ongoing", app: app)
        notification.oneLineBody = ([handle] + facts).filter { !$0.isEmpty }.joined(separator: " · ")
        notification.urgency = .normal
        notification.namesAppInText = true
        notification.resident = true
        notification.expiry = .never
        let opensApp = !notification.desktopEntry.isEmpty
        notification.actions = actions(Button.ongoing(call, opensApp: opensApp), opensApp: opensApp)
        return notification
    }

    /// "Call ended · M:SS", for `endedExpiry` seconds.
    func ended(app: ProviderConfiguration?, expiry seconds: Int) -> DesktopNotification {
        let duration = NotificationText.duration(call.endedAt - min(call.endedAt, call.connectedAt))
        var notification = base(summary: tr("Call ended · %1$s", duration), body: NotificationText.caller(call), category: "call.ended", app: app)
        notification.expiry = .seconds(seconds)
        return notification
    }

    /// "Missed call", who and when, with Call back. The server's own timeout: on servers that show
    /// one notification at a time, a missed call that never expired would hide the next ringing
    /// one. Those with a history keep it.
    func missed(app: ProviderConfiguration?) -> DesktopNotification {
        var notification = base(summary: tr("Missed call"), body: NotificationText.caller(call) + "\n" + NotificationText.when(call.startedAt),
                                category: "call.unanswered", app: app)
        notification.imagePNG = []
        notification.actions = actions([.callBack], opensApp: false)
        notification.expiry = .serverDefault
        return notification
    }

    /// A card's icon when its app gave none: a phone, never the server's fallback (GNOME Shell 43
    /// draws a red "no entry" sign for an urgent notification without one).
    static let fallbackIcon = "call-start-symbolic"

    /// What every notification of a call carries: its key, the app's name, icon and desktop entry.
    private func base(summary: String, body: String, category: String, app: ProviderConfiguration?) -> DesktopNotification {
        var notification = DesktopNotification(key: key, appName: call.appDisplayName, summary: summary, body: body)
        notification.category = category
        notification.iconName = app.map(\.iconName).flatMap { $0.isEmpty ? nil : $0 } ?? Self.fallbackIcon
        notification.imagePNG = app?.iconData ?? []
        notification.desktopEntry = app?.desktopEntry ?? ""
        notification.summaryNamingApp = NotificationText.naming(summary, app: call.appDisplayName)
        return notification
    }

    private func actions(_ buttons: [Button], opensApp: Bool) -> [DesktopNotification.Action] {
        buttons.map { .init($0.id, $0.label(for: call, opensApp: opensApp)) }
    }
}

extension CallNotification {
    /// What a call's notification is at a moment of the call's life: it rings, it is up (the in-call
    /// card, which takes the ringing notification's place under the same key), and when it ends it
    /// leaves "Call ended · M:SS" (a call that connected) or "Missed call" (an incoming call nobody
    /// answered). Derived from the call alone.
    enum Phase: Equatable {
        case ringing, ongoing, ended, missed

        /// The phase `call` is in; nil for an ended call that leaves nothing behind (declined, answered
        /// elsewhere, an outgoing call that never connected).
        init?(_ call: Call) {
            switch call.state {
            case .ringing: self = .ringing
            case .dialing, .connecting, .active, .held: self = .ongoing
            case .ended:
                if !call.outgoing, !call.wasAnswered, call.endReason == .unanswered {
                    self = .missed
                } else if call.hasConnected {
                    self = .ended
                } else {
                    return nil
                }
            }
        }
    }

    /// Every button a call's notification has: its id (the notification action), its label, the phase
    /// whose notification shows it, and what pressing it does. The one table of buttons.
    enum Button: CaseIterable {
        case answer, decline
        case holdAndAnswer, endAndAnswer
        /// A click on the ringing notification's body: servers such as dunst close on a click and hide
        /// the buttons in a menu.
        case body
        /// A click on the ongoing notification's body, of a call whose app has no window (no desktop
        /// entry): the Phone app's call window.
        case ongoingBody
        /// Stops the ringtone the service plays; the call rings on.
        case silence
        case hangUp, mute, unmute, hold, resume
        case showApp
        case callBack

        /// The notification action's id: unique in a phase (both bodies are the server's "default").
        var id: String {
            switch self {
            case .answer: ActionName.answer.rawValue
            case .decline: "decline"
            case .holdAndAnswer: "hold-and-answer"
            case .endAndAnswer: "end-and-answer"
            case .body, .ongoingBody: "default"
            case .silence: "silence"
            case .hangUp: "hang-up"
            case .mute: "mute"
            case .unmute: "unmute"
            case .hold: "hold"
            case .resume: "resume"
            case .showApp: "show-app"
            case .callBack: "call-back"
            }
        }

        /// The button that action `id` names on a notification of `phase`.
        static func named(_ id: String, in phase: Phase) -> Button? {
            allCases.first { $0.id == id && $0.phase == phase }
        }

        var phase: Phase {
            switch self {
            case .answer, .decline, .holdAndAnswer, .endAndAnswer, .body, .silence: .ringing
            case .hangUp, .mute, .unmute, .hold, .resume, .showApp, .ongoingBody: .ongoing
            case .callBack: .missed
            }
        }

        /// The label on `call`'s notification; `opensApp` when the call's app has a desktop entry.
        func label(for call: Call, opensApp: Bool) -> String {
            switch self {
            case .answer: trc("button", "Answer")
            case .decline: trc("button", "Decline")
            case .holdAndAnswer: trc("button", "Hold & Answer")
            case .endAndAnswer: trc("button", "End & Answer")
            // TRANSLATORS: a button that opens the app of the call; %1$s is the app's name.
            case .body: opensApp ? trc("button", "Open %1$s", call.appDisplayName) : trc("button", "Answer")
            case .silence: trc("button", "Silence")
            case .hangUp: trc("button", "Hang Up")
            case .mute: trc("button", "Mute")
            case .unmute: trc("button", "Unmute")
            case .hold: trc("button", "Hold")
            case .resume: trc("button", "Resume")
            case .showApp: trc("button", "Open %1$s", call.appDisplayName)
            case .ongoingBody: trc("button", "Show Call")
            case .callBack: trc("button", "Call back")
            }
        }

        /// What pressing the button on `call`'s notification does.
        enum Effect: Equatable {
            /// One transaction of these actions; the switchboard arbitrates (answering or resuming
            /// holds or ends the other active calls by itself).
            case transaction([ActionRequest])
            /// The call's app comes forward.
            case showApp
            /// The Phone app's call window shows the call (its app has none); when the Phone app
            /// cannot, these actions instead.
            case showCall(otherwise: [ActionRequest])
            /// The call's ringtone stops.
            case silence
        }

        /// `others`: the other calls, for End & Answer.
        func effect(on call: Call, opensApp: Bool, others: [Call]) -> Effect {
            let uuid = call.uuid
            return switch self {
            case .body where opensApp, .showApp: .showApp
            // No window of its own: the Phone app's call window, else answered from here.
            case .body: .showCall(otherwise: [.answer(uuid)])
            case .ongoingBody: .showCall(otherwise: [])
            case .silence: .silence
            case .answer, .holdAndAnswer: .transaction([.answer(uuid)])
            case .decline, .hangUp: .transaction([.end(uuid)])
            // End(old) then Answer(new), old being the call that is up: a call already on hold stays.
            case .endAndAnswer:
                .transaction(others.filter { ![.ringing, .ended, .held].contains($0.state) }.map { .end($0.uuid) } + [.answer(uuid)])
            case .mute: .transaction([.setMuted(uuid, true)])
            case .unmute: .transaction([.setMuted(uuid, false)])
            case .hold: .transaction([.setHeld(uuid, true)])
            case .resume: .transaction([.setHeld(uuid, false)])
            case .callBack: .transaction([.start(UUID(), handle: call.handle, provider: call.provider)])
            }
        }

        /// The buttons of a ringing notification, those that matter most first (GNOME Shell draws
        /// three): Answer, Decline and Silence (`silence`: while the service rings); while a call is
        /// up, Hold & Answer (when every call that is up can be held) and End & Answer come first and
        /// plain Answer last; then the body's click.
        static func ringing(othersUp: [Call], silence: Bool) -> [Button] {
            var buttons: [Button] = []
            if !othersUp.isEmpty, othersUp.allSatisfy(\.supportsHolding) { buttons.append(.holdAndAnswer) }
            if !othersUp.isEmpty { buttons.append(.endAndAnswer) }
            if othersUp.isEmpty { buttons.append(.answer) }
            buttons.append(.decline)
            if silence { buttons.append(.silence) }
            if !othersUp.isEmpty { buttons.append(.answer) }
            return buttons + [.body]
        }

        /// The buttons of an ongoing-call notification.
        static func ongoing(_ call: Call, opensApp: Bool) -> [Button] {
            var buttons: [Button] = [.hangUp, call.muted ? .unmute : .mute]
            if call.supportsHolding { buttons.append(call.onHold ? .resume : .hold) }
            buttons.append(opensApp ? .showApp : .ongoingBody)
            return buttons
        }
    }
}
