import CGtk
import FoundationEssentials
import GObjectBoundary
import Localization
import PhoneModel

/// The call window (call-window.ui): the shown call ringing, ongoing or ended. A timer runs
/// only while a call is up (its duration); the window closes a few seconds after the call ends.
@MainActor
final class CallWindow {
    let ui = UIFile(path: UIFiles.path("call-window.ui"), domain: Localization.domain)
    let calls: CallsModel
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
        let window = ui["call_window"]
        gtk_window_set_application(cast(window), cast(raw(application.app)))
        gtk_window_set_hide_on_close(cast(window), 0)
        connect(ui["call_answer"], "clicked") { AppTask.start { await calls.answer() } }
        connect(ui["call_decline"], "clicked") { AppTask.start { await calls.decline() } }
        connect(ui["call_silence"], "clicked") { AppTask.start { await calls.silence() } }
        connect(ui["call_hold_answer"], "clicked") { AppTask.start { await calls.holdAndAnswer() } }
        connect(ui["call_end_answer"], "clicked") { AppTask.start { await calls.endAndAnswer() } }
        connect(ui["call_mute"], "clicked") { AppTask.start { await calls.toggleMute() } }
        connect(ui["call_hold"], "clicked") { AppTask.start { await calls.toggleHold() } }
        connect(ui["call_hang_up"], "clicked") { AppTask.start { await calls.hangUp() } }
        connect(ui["call_switch"], "clicked") { AppTask.start { await calls.switchToOther() } }
        connect(ui["call_merge"], "clicked") { AppTask.start { await calls.merge() } }
        connect(ui["call_close"], "clicked") { [unowned self] in self.close() }
        connect(ui["call_keypad"], "toggled") { [unowned self] in
            gtk_revealer_set_reveal_child(cast(self.ui["call_keypad_revealer"]), gtk_toggle_button_get_active(cast(self.ui["call_keypad"])))
        }
        for (id, key) in [("1", "1"), ("2", "2"), ("3", "3"), ("4", "4"), ("5", "5"), ("6", "6"), ("7", "7"), ("8", "8"), ("9", "9"),
                          ("star", "*"), ("0", "0"), ("hash", "#")] {
            connect(ui["dtmf_\(id)"], "clicked") { AppTask.start { await calls.sendDigits(key) } }
        }
        // Escape closes the window once the call is over.
        let keys = gtk_event_controller_key_new()
        connectKey(raw(keys), "key-pressed") { [unowned self] key in
            guard key == UInt32(GDK_KEY_Escape), self.ended else { return false }
            self.close()
            return true
        }
        gtk_widget_add_controller(cast(window), keys)
        connectReturning(window, "close-request") { [unowned self] in
            self.finish()
            return false
        }
        calls.onChange = { [unowned self] in self.refresh() }
        refresh()
    }

    func present() {
        refresh()
        gtk_window_present(cast(ui["call_window"]))
    }

    private func close() {
        gtk_window_close(cast(ui["call_window"]))
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
        Widget.setText(ui["call_title"], view.title)
        Widget.setText(ui["call_subtitle"], view.subtitle)
        Widget.setText(ui["call_status"], view.status)
        adw_avatar_set_text(cast(ui["call_avatar"]), view.title)
        gtk_stack_set_visible_child_name(cast(ui["call_controls"]), view.phase.rawValue)
        Widget.setVisible(ui["call_waiting_box"], view.phase == .ringing && view.otherCallUp)
        Widget.setVisible(ui["call_other_box"], view.other != nil)
        Widget.setText(ui["call_other"], view.other?.summary ?? "")
        Widget.setVisible(ui["call_switch"], view.other?.canSwitch == true)
        Widget.setVisible(ui["call_merge"], view.other?.canMerge == true)
        Widget.setSensitive(ui["call_silence"], !view.silenced)
        gtk_toggle_button_set_active(cast(ui["call_mute"]), view.muted ? 1 : 0)
        Widget.setButtonLabel(ui["call_mute"], view.muted ? tr("Unmute") : tr("Mute"))
        gtk_toggle_button_set_active(cast(ui["call_hold"]), view.onHold ? 1 : 0)
        Widget.setButtonLabel(ui["call_hold"], view.onHold ? tr("Resume") : tr("Hold"))
        Widget.setSensitive(ui["call_hold"], view.canHold)
        Widget.setSensitive(ui["call_keypad"], view.canSendDigits)
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
