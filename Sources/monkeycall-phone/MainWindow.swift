import CGtk
import GObjectBoundary
import PhoneModel
import ScreenText

/// The main window (main-window.ui, MonkeyCallPhoneWindow): the view switcher over the four pages,
/// each a template and a Swift type of its own, the lock screen offer, the toasts, and the page
/// shown while the service is not running. It moves between pages; each page does its own work.
@MainActor
final class MainWindow {
    static let template = WidgetTemplate(className: "MonkeyCallPhoneWindow", parent: adw_application_window_get_type(),
                                         resource: GResourceBundle.ui("main-window.ui"),
                                         requires: [FavoritesPage.template, RecentsPage.template, ContactsPage.template, KeypadPage.template])

    let window: Window
    let model: PhoneModel
    private let toasts: ToastOverlay
    private let mainStack: Stack
    private let stack: ViewStack
    private let startService: Button
    private let favorites: FavoritesPage
    private let recents: RecentsPage
    private let contacts: ContactsPage
    private let keypad: KeypadPage
    private let lockScreenOffer: LockScreenOfferBar

    init(application: PhoneApplication, model: PhoneModel) {
        self.model = model
        let widget = Self.template.instantiate()
        let template = Self.template
        window = Window(checking: widget, what: template.typeName)
        toasts = template.child(widget, "toasts")
        mainStack = template.child(widget, "main_stack")
        stack = template.child(widget, "stack")
        startService = template.child(widget, "start_service")
        lockScreenOffer = LockScreenOfferBar(offer: model.lockScreenOffer, bar: template.child(widget, "lock_offer"),
                                             turnOn: template.child(widget, "lock_offer_turn_on"), notNow: template.child(widget, "lock_offer_not_now"))
        favorites = FavoritesPage(template.child(widget, "favorites"), model: model)
        recents = RecentsPage(template.child(widget, "recents"), tab: template.child(widget, "recents_page"), model: model)
        contacts = ContactsPage(template.child(widget, "contacts"), model: model)
        keypad = KeypadPage(template.child(widget, "keypad"), model: model)

        gtk_window_set_application(window.window, cast(raw(application.app)))
        model.onToast = { [unowned self] text in self.toast(text) }
        model.onServiceChange = { [unowned self] in self.serviceChanged() }
        startService.onClicked { [unowned self] in AppTask.start { await self.model.startService() } }
        stack.onNotify("visible-child-name") { [unowned self] in self.viewChanged() }
        window.onNotify("is-active") { [unowned self] in self.viewChanged() }
        recents.onMissedCountChange = { [unowned self] in self.viewChanged() }
        contacts.onDial = { [unowned self] number in self.dial(number) }
        serviceChanged()
        FirstFrame.report(widget)
    }

    func present() {
        window.present()
        // Once a run, when the window first opens (a call window alone asks nothing).
        AppTask.start { await self.model.lockScreenOffer.check() }
    }

    private func toast(_ text: String) {
        // Also in the log: what the user was told, for whoever reads a failed run.
        StandardStream.error.write("monkeycall-phone: \(text)\n")
        toasts.show(text)
    }

    private func serviceChanged() {
        mainStack.visibleChildName = model.service != .notRunning ? "views" : "not-running"
    }

    /// Viewing Recents marks the missed calls seen.
    private func viewChanged() {
        if window.isActive, stack.visibleChildName == "recents" { recents.viewed() }
    }

    /// Shows Contacts searching for `query`.
    func search(_ query: String) {
        stack.visibleChildName = "contacts"
        contacts.search(query)
    }

    /// Puts `handle` on the keypad and calls it when one app can; else the keypad asks which.
    /// A handle with control or bidi characters is shown cleaned and not called (`KeypadModel.take`).
    func dial(_ handle: String) {
        stack.visibleChildName = "keypad"
        keypad.dial(handle)
    }
}
