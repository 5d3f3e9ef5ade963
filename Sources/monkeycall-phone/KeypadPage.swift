import CGtk
import GObjectBoundary
import Localization
import MonkeyCallAPI
import PhoneModel
import ScreenText

/// The Keypad (keypad-page.ui, MonkeyCallKeypadPage): the number, typed or pressed (each key names
/// its digit: `keypad.press`), the app that calls it, asked when several can, Call and Add to
/// Favorites.
@MainActor
final class KeypadPage {
    static let template = WidgetTemplate(className: "MonkeyCallKeypadPage", parent: adw_bin_get_type(),
                                         resource: GResourceBundle.ui("keypad-page.ui"))

    private let model: PhoneModel
    private let entry: Entry
    private let chooseLabel: Label
    private let apps: Box
    private let remember: CheckButton
    private let call: Button
    private let actions: ActionGroup
    /// The apps the buttons were made for, to remake them only when they change.
    private var appsShown: [CallingApp]? = nil

    init(_ widget: AnyWidget, model: PhoneModel) {
        let page = Self.template.checked(widget.object)
        let template = Self.template
        self.model = model
        entry = template.child(page, "entry")
        chooseLabel = template.child(page, "choose_label")
        apps = template.child(page, "apps")
        remember = template.child(page, "remember")
        call = template.child(page, "call")
        let backspace: Button = template.child(page, "backspace")
        let favorite: Button = template.child(page, "favorite")
        let keypad = model.keypad
        actions = ActionGroup(insertedIn: page, prefix: "keypad")
        actions.add("press") { key in keypad.press(key) }
        backspace.onClicked { keypad.backspace() }
        entry.on("changed") { [unowned self] in keypad.setText(self.entry.text) }
        entry.on("activate") { [unowned self] in self.callNumber(with: nil) }
        call.onClicked { [unowned self] in self.callNumber(with: nil) }
        favorite.onClicked {
            if let problem = keypad.problem { return model.onToast(problem) }
            let app = keypad.apps.first { $0.name == keypad.remembered } ?? keypad.apps.first
            AppTask.start { await model.favorites.add(handle: keypad.number, handleType: Telephony1.HandleTypes.phoneNumber, name: "", app: app?.name ?? "") }
        }
        keypad.onChange = { [unowned self] in self.keypadChanged() }
        keypadChanged()
    }

    /// Puts `handle` on the keypad and calls it when one app can; else the keypad asks which.
    func dial(_ handle: String) {
        let keypad = model.keypad
        if keypad.take(handle), !keypad.needsChoice { callNumber(with: nil) }
    }

    private func keypadChanged() {
        let keypad = model.keypad
        if entry.text != keypad.number {
            entry.text = keypad.number
            entry.setPosition(-1)
        }
        let choosing = keypad.needsChoice
        chooseLabel.isVisible = choosing
        remember.isVisible = choosing
        call.isVisible = !choosing
        let shown = choosing ? keypad.apps : []
        guard shown != appsShown else { return }
        appsShown = shown
        apps.removeAll()
        for app in shown {
            // TRANSLATORS: a button that places the typed number's call through an app; %1$s is the app's name.
            let button = gtk_button_new_with_label(trc("button", "Call with %1$s", Format.clean(app.name)))
            gtk_widget_add_css_class(button, "pill")
            connect(raw(button), "clicked") { [unowned self] () in self.callNumber(with: app) }
            apps.append(raw(button))
        }
    }

    private func callNumber(with app: CallingApp?) {
        let keypad = model.keypad
        if app == nil, keypad.needsChoice, keypad.problem == nil { return model.onToast(tr("Choose the app that calls")) }
        let remember = remember.isActive
        AppTask.start {
            if let uuid = await keypad.call(with: app, remember: remember) { self.model.calls.show(uuid) }
        }
    }
}
