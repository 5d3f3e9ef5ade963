import CGtk
import FoundationEssentials
import GObjectBoundary
import Localization
import PhoneModel

/// The call window (call-window.ui, MonkeyCallCallWindow): the shown call ringing, ongoing or
/// ended. A timer runs only while a call is up (its duration); the window closes a few seconds
/// after the call ends. Its keypad's keys name their digits (`call.send-digits`).
@MainActor
final class CallWindow {
    static let template = WidgetTemplate(className: "MonkeyCallCallWindow", parent: adw_window_get_type(),
                                         resource: GResourceBundle.ui("call-window.ui"))

    let calls: CallsModel
    private let window: Window
    private let avatar: Avatar
    private let title: Label
    private let subtitle: Label
    private let status: Label
    /// The page for the call's phase (`CallView.Phase`: ringing, ongoing, ended).
    private let controls: Stack
    private let waitingBox: AnyWidget
    private let otherBox: AnyWidget
    private let other: Label
    private let switchButton: Button
    private let merge: Button
    private let silence: Button
    private let mute: ToggleButton
    private let hold: ToggleButton
    private let keypad: ToggleButton
    private let keypadRevealer: Revealer
    private let actions: ActionGroup
    private let onClosed: () -> Void
    private var ticker: UInt32 = 0
    private var closer: UInt32 = 0

    /// How long an ended call stays on screen before the window closes by itself: 4 s, or
    /// `MONKEYCALL_PHONE_CLOSE_AFTER_MS` (the tests make it long, to tell Escape's closing from it).
    static let closeAfter: UInt32 = ProcessInfo.processInfo.environment["MONKEYCALL_PHONE_CLOSE_AFTER_MS"].flatMap { UInt32($0) } ?? 4000
    private var ended = false

    init(application: PhoneApplication, model calls: CallsModel, onClosed: @escaping () -> Void) {
        self.calls = calls
        self.onClosed = onClosed
        let template = Self.template
        let widget = template.instantiate()
        window = Window(checking: widget, what: template.typeName)
        avatar = template.child(widget, "avatar")
        title = template.child(widget, "title")
        subtitle = template.child(widget, "subtitle")
        status = template.child(widget, "status")
        controls = template.child(widget, "controls")
        waitingBox = template.child(widget, "waiting_box")
        otherBox = template.child(widget, "other_box")
        other = template.child(widget, "other")
        switchButton = template.child(widget, "switch")
        merge = template.child(widget, "merge")
        silence = template.child(widget, "silence")
        mute = template.child(widget, "mute")
        hold = template.child(widget, "hold")
        keypad = template.child(widget, "keypad")
        keypadRevealer = template.child(widget, "keypad_revealer")
        actions = ActionGroup(insertedIn: widget, prefix: "call")
        let answer: Button = template.child(widget, "answer_call")
        let decline: Button = template.child(widget, "decline")
        let holdAndAnswer: Button = template.child(widget, "hold_answer")
        let endAndAnswer: Button = template.child(widget, "end_answer")
        let hangUp: Button = template.child(widget, "hang_up")
        let close: Button = template.child(widget, "close")

        gtk_window_set_application(window.window, cast(raw(application.app)))
        answer.onClicked { AppTask.start { await calls.answer() } }
        decline.onClicked { AppTask.start { await calls.decline() } }
        silence.onClicked { AppTask.start { await calls.silence() } }
        holdAndAnswer.onClicked { AppTask.start { await calls.holdAndAnswer() } }
        endAndAnswer.onClicked { AppTask.start { await calls.endAndAnswer() } }
        mute.on("clicked") { AppTask.start { await calls.toggleMute() } }
        hold.on("clicked") { AppTask.start { await calls.toggleHold() } }
        hangUp.onClicked { AppTask.start { await calls.hangUp() } }
        switchButton.onClicked { AppTask.start { await calls.switchToOther() } }
        merge.onClicked { AppTask.start { await calls.merge() } }
        close.onClicked { [unowned self] in self.close() }
        keypad.onToggled { [unowned self] in self.keypadRevealer.revealsChild = self.keypad.isActive }
        actions.add("send-digits") { digits in AppTask.start { await calls.sendDigits(digits) } }
        // Escape closes the window once the call is over.
        let keys = gtk_event_controller_key_new()
        connectKey(raw(keys), "key-pressed") { [unowned self] key in
            guard key == UInt32(GDK_KEY_Escape), self.ended else { return false }
            self.close()
            return true
        }
        gtk_widget_add_controller(cast(widget), keys)
        connectReturning(widget, "close-request") { [unowned self] in
            self.finish()
            return false
        }
        calls.onChange = { [unowned self] in self.refresh() }
        refresh()
    }

    func present() {
        refresh()
        window.present()
    }

    private func close() {
        window.close()
    }

    private func finish() {
        Timeout.cancel(ticker)
        Timeout.cancel(closer)
        ticker = 0
        closer = 0
        calls.onChange = {}
        calls.hide()
        onClosed()
    }

    private func refresh() {
        guard let view = calls.view() else { return }
        title.text = view.title
        subtitle.text = view.subtitle
        status.text = view.status
        avatar.text = view.title
        controls.visibleChildName = view.phase.rawValue
        waitingBox.isVisible = view.phase == .ringing && view.otherCallUp
        otherBox.isVisible = view.other != nil
        other.text = view.other?.summary ?? ""
        switchButton.isVisible = view.other?.canSwitch == true
        merge.isVisible = view.other?.canMerge == true
        silence.isSensitive = !view.silenced
        mute.isActive = view.muted
        mute.label = view.muted ? tr("Unmute") : tr("Mute")
        hold.isActive = view.onHold
        hold.label = view.onHold ? tr("Resume") : tr("Hold")
        hold.isSensitive = view.canHold
        keypad.isSensitive = view.canSendDigits
        let running = view.phase == .ongoing
        if running, ticker == 0 {
            ticker = Timeout.every(milliseconds: 1000) { [unowned self] in
                self.refresh()
                return self.ticker != 0
            }
        } else if !running, ticker != 0 {
            Timeout.cancel(ticker)
            ticker = 0
        }
        if view.phase == .ended, !ended {
            ended = true
            closer = Timeout.after(milliseconds: Self.closeAfter) { [unowned self] in
                self.closer = 0
                self.close()
            }
        } else if view.phase != .ended {
            ended = false
        }
    }
}
