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

    /// `call`'s notification as the call is now, following on from `previous`, its notification
    /// before this change (a dismissal counts for the ringing only); nil when `call` is in no phase
    /// that shows anything.
    init?(_ call: Call, following previous: CallNotification? = nil) {
        guard let phase = Phase(call) else { return nil }
        self.call = call
        self.phase = phase
        dismissals = phase == .ringing ? previous?.dismissals ?? 0 : 0
    }

    mutating func dismissed() { dismissals += 1 }

    var key: String { phase == .missed ? "missed-" + call.uuid.apiString : call.uuid.apiString }

    // MARK: What the desktop shows

    /// "Incoming call", ringing with the app's sound (silenced once dismissed), urgent.
    /// `servicePlaysRingtone`: the service plays the ringtone itself (`CallRingtone`): the server
    /// plays none, and a Silence button stops it while it plays. `othersUp`: the calls that are up
    /// and not on hold, for the buttons.
    func ringing(othersUp: [Call], app: ProviderConfiguration?, servicePlaysRingtone: Bool = false) -> DesktopNotification {
        var notification = base(summary: call.hasVideo ? tr("Incoming video call") : tr("Incoming call"),
                                lines: callerLines, category: "call.incoming", app: app)
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
        // The buttons, those that matter most first (GNOME Shell draws three): Answer, Decline and,
        // while the service rings, Silence; while a call is up, Hold & Answer (when every call that
        // is up can be held) and End & Answer come first and plain Answer last; then the body's click.
        var buttons: [Button] = []
        if !othersUp.isEmpty, othersUp.allSatisfy(\.supportsHolding) { buttons.append(.holdAndAnswer) }
        if !othersUp.isEmpty { buttons.append(.endAndAnswer) }
        if othersUp.isEmpty { buttons.append(.answer) }
        buttons.append(.decline)
        if servicePlaysRingtone && !call.silenced && dismissals == 0 { buttons.append(.silence) }
        if !othersUp.isEmpty { buttons.append(.answer) }
        notification.actions = actions(buttons + [.body], opensApp: !notification.desktopEntry.isEmpty)
        return notification
    }

    /// "Call with Alice", its handle, app, since when and whether muted, and the buttons. `urgency` 1,
    /// never 2: it must not break through Do Not Disturb the way a ringing call may.
    func ongoing(app: ProviderConfiguration?) -> DesktopNotification {
        // The caller's name, else the handle.
        let who = call.displayName.isEmpty ? call.handle.value : call.displayName
        let summary = switch call.state {
        // TRANSLATORS: %1$s is the caller's name or number.
        case .dialing, .connecting: tr("Calling %1$s…", who)
        // TRANSLATORS: %1$s is the caller's name or number.
        case .held: tr("%1$s — on hold", who)
        // TRANSLATORS: %1$s is the caller's name or number.
        default: tr("Call with %1$s", who)
        }
        // The handle once: not under a name it repeats ("Call with Bob", not "bob" again).
        let handle = Self.repeats(who, call.handle.value) && who != call.handle.value ? "" : call.handle.value
        var facts = [NotificationText.since(call.connectedAt > 0 ? call.connectedAt : call.startedAt)]
        if call.muted { facts.append(tr("muted")) }
        // Lines: the handle, the app (servers before GNOME Shell 46 draw it nowhere else), since
        // when, muted. One line where the header names the app: "+1 408 555 0142 · since 14:02".
        let lines = [handle, call.appDisplayName] + facts
        var notification = base(summary: summary, lines: lines.filter { !$0.isEmpty }, category: "call.ongoing", app: app)
        notification.oneLineBody = ([handle] + facts).filter { !$0.isEmpty }.joined(separator: " · ")
        notification.urgency = .normal
        notification.namesAppInText = true
        notification.resident = true
        notification.expiry = .never
        // Hang Up, Mute or Unmute, Hold or Resume where the call can be held, and the app's window
        // (without one, the Phone app's call window).
        let opensApp = !notification.desktopEntry.isEmpty
        var buttons: [Button] = [.hangUp, call.muted ? .unmute : .mute]
        if call.supportsHolding { buttons.append(call.onHold ? .resume : .hold) }
        buttons.append(opensApp ? .showApp : .ongoingBody)
        notification.actions = actions(buttons, opensApp: opensApp)
        return notification
    }

    /// "Call ended · M:SS", for `endedExpiry` seconds.
    func ended(app: ProviderConfiguration?, expiry seconds: Int) -> DesktopNotification {
        let duration = NotificationText.duration(call.endedAt - min(call.endedAt, call.connectedAt))
        var notification = base(summary: tr("Call ended · %1$s", duration), lines: callerLines, category: "call.ended", app: app)
        notification.expiry = .seconds(seconds)
        return notification
    }

    /// "Missed call", who and when, with Call back. The server's own timeout: on servers that show
    /// one notification at a time, a missed call that never expired would hide the next ringing
    /// one. Those with a history keep it.
    func missed(app: ProviderConfiguration?) -> DesktopNotification {
        var notification = base(summary: tr("Missed call"), lines: callerLines + [NotificationText.when(call.startedAt)],
                                category: "call.unanswered", app: app)
        notification.imagePNG = []
        notification.actions = actions([.callBack], opensApp: false)
        notification.expiry = .serverDefault
        return notification
    }

    /// A card's icon when its app gave none: a phone, never the server's fallback (GNOME Shell 43
    /// draws a red "no entry" sign for an urgent notification without one).
    static let fallbackIcon = "call-start-symbolic"

    /// "Name" over "handle", or the handle alone (also when the name only repeats it): lines of their
    /// own, so that a line break inside a caller's name cannot fake one (the notifier cleans each).
    private var callerLines: [String] {
        let name = call.displayName
        let handle = call.handle.value
        if name.isEmpty { return [handle] }
        // The name alone when the handle only repeats it ("Bob", not "Bob" over "bob").
        return Self.repeats(name, handle) ? [name] : [name, handle]
    }

    /// The handle says no more than the name: "bob" under "Bob" is shown once.
    static func repeats(_ name: String, _ handle: String) -> Bool {
        name.lowercased() == handle.lowercased()
    }

    /// What every notification of a call carries: its key, the app's name, icon and desktop entry.
    private func base(summary: String, lines: [String], category: String, app: ProviderConfiguration?) -> DesktopNotification {
        var notification = DesktopNotification(key: key, appName: call.appDisplayName, summary: summary, lines: lines)
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

        /// The button each action id names, by the phase of the notification it is on: the one
        /// place an action is read back.
        static let byAction: [Phase: [String: Button]] = Dictionary(grouping: allCases, by: \.phase).mapValues { buttons in
            Dictionary(uniqueKeysWithValues: buttons.map { ($0.id, $0) })
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

        /// `others`: the other calls, for End & Answer (asked for by no other button).
        func effect(on call: Call, opensApp: Bool, others: @autoclosure () -> [Call]) -> Effect {
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
                .transaction(others().filter { ![.ringing, .ended, .held].contains($0.state) }.map { .end($0.uuid) } + [.answer(uuid)])
            case .mute: .transaction([.setMuted(uuid, true)])
            case .unmute: .transaction([.setMuted(uuid, false)])
            case .hold: .transaction([.setHeld(uuid, true)])
            case .resume: .transaction([.setHeld(uuid, false)])
            case .callBack: .transaction([.start(UUID(), handle: call.handle, provider: call.provider)])
            }
        }
    }
}
