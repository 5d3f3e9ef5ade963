import GObjectBoundary
import PhoneModel

/// The offer, made once, to turn on MonkeyCall's GNOME Shell extension (answering calls from the
/// lock screen): a bar that slides down under the header (main-window.ui) while the model offers it.
@MainActor
final class LockScreenOfferBar {
    private let offer: LockScreenOfferModel
    private let bar: Revealer

    init(offer: LockScreenOfferModel, bar: Revealer, turnOn: Button, notNow: Button) {
        self.offer = offer
        self.bar = bar
        offer.onChange = { [unowned self] in
            if self.offer.isShown { self.bar.isVisible = true }
            self.bar.revealsChild = self.offer.isShown
        }
        // Gone from the window (and from what a screen reader reads) once it has slid away.
        bar.onNotify("child-revealed") { [unowned self] in
            if !self.offer.isShown, !self.bar.isChildRevealed { self.bar.isVisible = false }
        }
        turnOn.onClicked { AppTask.start { await offer.turnOn() } }
        notNow.onClicked { offer.notNow() }
    }
}
