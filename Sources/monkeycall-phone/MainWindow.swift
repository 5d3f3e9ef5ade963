import CGtk
import FoundationEssentials
import GObjectBoundary
import Localization
import MonkeyCallAPI
import PhoneModel
import ScreenText

/// The main window (main-window.ui) wired to the model: each view reads its part of the
/// model when it changes, and each button calls it.
@MainActor
final class MainWindow {
    let ui = UIFile(path: UIFiles.path("main-window.ui"), domain: Localization.domain)
    let model: PhoneModel
    unowned let application: PhoneApplication
    private var recentsList: ListController!
    private var favoritesList: ListController!
    private var contactsList: ListController!
    /// The apps the keypad's buttons were made for, to remake them only when they change.
    private var keypadAppsShown: [CallingApp]? = nil

    init(application: PhoneApplication, model: PhoneModel) {
        self.application = application
        self.model = model
        gtk_window_set_application(cast(ui["window"]), cast(raw(application.app)))
        // The switcher moves to the bottom when the title has no room for it.
        g_object_bind_property(ui["switcher_title"], "title-visible", ui["switcher_bar"], "reveal", G_BINDING_SYNC_CREATE)
        model.onToast = { [unowned self] text in self.toast(text) }
        model.onServiceChange = { [unowned self] in self.serviceChanged() }
        connect(ui["start_service"], "clicked") { [unowned self] in AppTask.start { await self.model.startService() } }
        connect(ui["stack"], "notify::visible-child-name") { [unowned self] (_: GPointer?) in self.viewChanged() }
        connect(ui["window"], "notify::is-active") { [unowned self] (_: GPointer?) in self.viewChanged() }
        setUpRecents()
        setUpFavorites()
        setUpContacts()
        setUpKeypad()
        setUpLockScreenOffer()
        serviceChanged()
        FirstFrame.report(ui["window"])
    }

    func present() {
        gtk_window_present(cast(ui["window"]))
        // Once a run, when the window first opens (a call window alone asks nothing).
        AppTask.start { await self.model.lockScreenOffer.check() }
    }

    // MARK: The lock screen offer

    private func setUpLockScreenOffer() {
        let offer = model.lockScreenOffer
        let bar = ui["lock_offer"]
        offer.onChange = {
            if offer.isShown { Widget.setVisible(bar, true) }
            gtk_revealer_set_reveal_child(cast(bar), offer.isShown ? 1 : 0)
        }
        // Gone from the window (and from what a screen reader reads) once it has slid away.
        connect(bar, "notify::child-revealed") { (_: GPointer?) in
            if !offer.isShown, gtk_revealer_get_child_revealed(cast(bar)) == 0 { Widget.setVisible(bar, false) }
        }
        connect(ui["lock_offer_turn_on"], "clicked") { AppTask.start { await offer.turnOn() } }
        connect(ui["lock_offer_not_now"], "clicked") { offer.notNow() }
    }

    private func toast(_ text: String) {
        // Also in the log: what the user was told, for whoever reads a failed run.
        StandardStream.error.write("monkeycall-phone: \(text)\n")
        adw_toast_overlay_add_toast(cast(ui["toasts"]), adw_toast_new(text))
    }

    private func serviceChanged() {
        let running = model.service != .notRunning
        gtk_stack_set_visible_child_name(cast(ui["main_stack"]), running ? "views" : "not-running")
    }

    private var visibleView: String {
        guard let name = adw_view_stack_get_visible_child_name(cast(ui["stack"])) else { return "" }
        return String(cString: name)
    }

    /// Viewing Recents marks the missed calls seen.
    private func viewChanged() {
        let active = gtk_window_is_active(cast(ui["window"])) != 0
        if active, visibleView == "recents", model.recents.missedCount > 0 {
            AppTask.start { await self.model.recents.markSeen() }
        }
    }

    // MARK: Recents

    private func setUpRecents() {
        recentsList = ListController(list: ui["recents_list"], rowFile: UIFiles.path("recent-row.ui"), domain: Localization.domain, setup: { [unowned self] cell in
            connect(cell["call"], "clicked") { [unowned self] in
                guard let id = UInt64(cell.key) else { return }
                AppTask.start { if let uuid = await self.model.recents.callBack(id) { self.model.calls.show(uuid) } }
            }
            connect(cell["delete"], "clicked") { [unowned self] in
                guard let id = UInt64(cell.key) else { return }
                AppTask.start { await self.model.recents.delete(id) }
            }
            connect(cell["favorite"], "clicked") { [unowned self] in
                guard let id = UInt64(cell.key), let entry = self.model.recents.entry(id) else { return }
                AppTask.start { await self.model.favorites.add(recent: entry) }
            }
        }, bind: { [unowned self] cell in
            guard let id = UInt64(cell.key), let entry = self.model.recents.entry(id) else { return }
            let row = RecentsModel.row(entry)
            Widget.setText(cell["title"], row.title)
            Widget.setText(cell["subtitle"], [row.subtitle, row.time].filter { !$0.isEmpty }.joined(separator: " · "))
            Widget.setText(cell["details"], row.details)
            if row.missed { Widget.addClass(cell["title"], "error") } else { Widget.removeClass(cell["title"], "error") }
            Widget.setLabel(cell["row"], row.accessibleLabel)
            Widget.setLabel(cell["call"], tr("Call back %1$s", row.title))
        })
        let recents = model.recents
        recents.onChange = { [unowned self] in
            let rows = recents.rows
            self.recentsList.show(rows.map { String($0.id) })
            gtk_stack_set_visible_child_name(cast(self.ui["recents_stack"]), rows.isEmpty ? "empty" : "list")
            adw_status_page_set_title(cast(self.ui["recents_empty"]), recents.filter == .missed ? tr("No Missed Calls") : tr("No Recent Calls"))
        }
        recents.onMissedCountChange = { [unowned self] in
            let count = recents.missedCount
            adw_view_stack_page_set_badge_number(cast(self.ui["recents_page"]), count)
            adw_view_stack_page_set_needs_attention(cast(self.ui["recents_page"]), count > 0 ? 1 : 0)
            Widget.setLabel(self.ui["recents_missed"], count > 0 ? trn("Missed (%d)", "Missed (%d)", Int(count)) : tr("Missed"))
            Widget.setButtonLabel(self.ui["recents_missed"], count > 0 ? trn("Missed (%d)", "Missed (%d)", Int(count)) : tr("Missed"))
            self.viewChanged()
        }
        connect(ui["recents_missed"], "toggled") { [unowned self] in
            recents.filter = gtk_toggle_button_get_active(cast(self.ui["recents_missed"])) != 0 ? .missed : .all
        }
        connectPosition(ui["recents_scroll"], "edge-reached") { edge in
            if edge == GTK_POS_BOTTOM.rawValue { AppTask.start { await recents.loadMore() } }
        }
        connect(ui["recents_clear"], "clicked") { [unowned self] in self.askToClearRecents() }
        recents.onChange()
    }

    private func askToClearRecents() {
        let dialog = adw_message_dialog_new(cast(ui["window"]), tr("Clear All Recents?"), tr("Every recent call is forgotten. This cannot be undone."))
        adw_message_dialog_add_response(cast(raw(dialog)), "cancel", tr("Cancel"))
        adw_message_dialog_add_response(cast(raw(dialog)), "clear", tr("Clear All"))
        adw_message_dialog_set_response_appearance(cast(raw(dialog)), "clear", ADW_RESPONSE_DESTRUCTIVE)
        adw_message_dialog_set_close_response(cast(raw(dialog)), "cancel")
        connect(raw(dialog), "response") { [unowned self] (response: GPointer?) in
            guard let response, String(cString: response.assumingMemoryBound(to: CChar.self)) == "clear" else { return }
            AppTask.start { await self.model.recents.clear() }
        }
        gtk_window_present(cast(raw(dialog)))
    }

    // MARK: Favorites

    private func setUpFavorites() {
        let favorites = model.favorites
        favoritesList = ListController(list: ui["favorites_list"], rowFile: UIFiles.path("favorite-row.ui"), domain: Localization.domain, setup: { [unowned self] cell in
            connect(cell["call"], "clicked") { [unowned self] in
                guard let id = UInt64(cell.key) else { return }
                AppTask.start { if let uuid = await favorites.call(id) { self.model.calls.show(uuid) } }
            }
            connect(cell["remove"], "clicked") {
                guard let id = UInt64(cell.key) else { return }
                AppTask.start { await favorites.remove(id) }
            }
        }, bind: { cell in
            guard let row = favorites.rows.first(where: { String($0.id) == cell.key }) else { return }
            Widget.setText(cell["title"], row.title)
            Widget.setText(cell["subtitle"], row.subtitle)
            Widget.setLabel(cell["row"], row.accessibleLabel)
            Widget.setLabel(cell["call"], tr("Call %1$s", row.title))
            Widget.setLabel(cell["remove"], tr("Remove %1$s from Favorites", row.title))
        })
        favorites.onChange = { [unowned self] in
            let rows = favorites.rows
            self.favoritesList.show(rows.map { String($0.id) })
            gtk_stack_set_visible_child_name(cast(self.ui["favorites_stack"]), rows.isEmpty ? "empty" : "list")
        }
        favorites.onChange()
    }

    // MARK: Contacts

    private func setUpContacts() {
        let contacts = model.contacts
        contactsList = ListController(list: ui["contacts_list"], rowFile: UIFiles.path("contact-row.ui"), domain: Localization.domain, setup: { _ in
        }, bind: { [unowned self] cell in
            guard let contact = contacts.rows.first(where: { $0.id == cell.key }) else { return }
            Widget.setText(cell["title"], contact.name)
            Widget.setLabel(cell["row"], contact.name)
            let box = cell["numbers"]
            while let child = gtk_widget_get_first_child(cast(box)) { gtk_box_remove(cast(box), child) }
            for number in contact.numbers {
                let line = UIFile(path: UIFiles.path("contact-number.ui"), domain: Localization.domain)
                Widget.setText(line["number"], number.number)
                Widget.setText(line["label"], number.label)
                Widget.setLabel(line["call"], tr("Call %1$s", number.number))
                Widget.setLabel(line["favorite"], tr("Add %1$s to Favorites", number.number))
                connect(line["call"], "clicked") { [unowned self] in self.dial(number.number) }
                connect(line["favorite"], "clicked") { [unowned self] () in
                    let app = self.model.keypad.apps.first { $0.name == self.model.keypad.remembered } ?? self.model.keypad.apps.first
                    AppTask.start { await self.model.favorites.add(handle: number.number, handleType: Telephony1.HandleTypes.phoneNumber,
                                                          name: contact.name, app: app?.name ?? "") }
                }
                gtk_box_append(cast(box), cast(line["row"]))
            }
        })
        contacts.onChange = { [unowned self] in
            self.contactsList.show(contacts.rows.map(\.id))
            let empty = contacts.rows.isEmpty
            gtk_stack_set_visible_child_name(cast(self.ui["contacts_stack"]), empty ? "empty" : "list")
            adw_status_page_set_title(cast(self.ui["contacts_empty"]),
                                      contacts.availability == .unsupported ? tr("Contacts Are Not Available") : tr("No Contacts Found"))
            adw_status_page_set_description(cast(self.ui["contacts_empty"]),
                                            contacts.availability == .unsupported ? tr("This version of the MonkeyCall service cannot search the address book") : nil)
        }
        connect(ui["contacts_search"], "search-changed") { [unowned self] () in
            let text = Widget.editableText(self.ui["contacts_search"])
            AppTask.start { await contacts.search(text) }
        }
        contacts.onChange()
    }

    func search(_ query: String) {
        adw_view_stack_set_visible_child_name(cast(ui["stack"]), "contacts")
        Widget.setEditableText(ui["contacts_search"], query)
        gtk_widget_grab_focus(cast(ui["contacts_search"]))
    }

    // MARK: Keypad

    private func setUpKeypad() {
        let keypad = model.keypad
        let keys = [("1", "1"), ("2", "2"), ("3", "3"), ("4", "4"), ("5", "5"), ("6", "6"), ("7", "7"), ("8", "8"), ("9", "9"),
                    ("star", "*"), ("0", "0"), ("hash", "#"), ("plus", "+")]
        for (id, key) in keys {
            connect(ui["keypad_\(id)"], "clicked") { () in keypad.press(key) }
        }
        connect(ui["keypad_backspace"], "clicked") { keypad.backspace() }
        connect(ui["keypad_entry"], "changed") { [unowned self] in keypad.setText(Widget.editableText(self.ui["keypad_entry"])) }
        connect(ui["keypad_entry"], "activate") { [unowned self] in self.callFromKeypad(nil) }
        connect(ui["keypad_call"], "clicked") { [unowned self] in self.callFromKeypad(nil) }
        connect(ui["keypad_favorite"], "clicked") { [unowned self] in
            guard keypad.problem == nil else { return self.toast(keypad.problem!) }
            let app = keypad.apps.first { $0.name == keypad.remembered } ?? keypad.apps.first
            AppTask.start { await self.model.favorites.add(handle: keypad.number, handleType: Telephony1.HandleTypes.phoneNumber, name: "", app: app?.name ?? "") }
        }
        keypad.onChange = { [unowned self] in self.keypadChanged() }
        keypadChanged()
    }

    private func keypadChanged() {
        let keypad = model.keypad
        if Widget.editableText(ui["keypad_entry"]) != keypad.number {
            Widget.setEditableText(ui["keypad_entry"], keypad.number)
            gtk_editable_set_position(cast(ui["keypad_entry"]), -1)
        }
        let choosing = keypad.needsChoice
        Widget.setVisible(ui["keypad_choose_label"], choosing)
        Widget.setVisible(ui["keypad_remember"], choosing)
        Widget.setVisible(ui["keypad_call"], !choosing)
        let shown = choosing ? keypad.apps : []
        guard shown != keypadAppsShown else { return }
        keypadAppsShown = shown
        let box = ui["keypad_apps"]
        while let child = gtk_widget_get_first_child(cast(box)) { gtk_box_remove(cast(box), child) }
        for app in shown {
            // TRANSLATORS: a button that places the typed number's call through an app; %1$s is the app's name.
            let button = gtk_button_new_with_label(trc("button", "Call with %1$s", Format.clean(app.name)))
            gtk_widget_add_css_class(button, "pill")
            connect(raw(button), "clicked") { [unowned self] () in self.callFromKeypad(app) }
            gtk_box_append(cast(box), button)
        }
    }

    private func callFromKeypad(_ app: CallingApp?) {
        let keypad = model.keypad
        if app == nil, keypad.needsChoice, keypad.problem == nil { return toast(tr("Choose the app that calls")) }
        let remember = gtk_check_button_get_active(cast(ui["keypad_remember"])) != 0
        AppTask.start {
            if let uuid = await keypad.call(with: app, remember: remember) { self.model.calls.show(uuid) }
        }
    }

    /// Puts `handle` on the keypad and calls it when one app can; else the keypad asks which.
    /// A handle with control or bidi characters is shown cleaned and not called (`KeypadModel.take`).
    func dial(_ handle: String) {
        let keypad = model.keypad
        let callable = keypad.take(handle)
        adw_view_stack_set_visible_child_name(cast(ui["stack"]), "keypad")
        if callable, !keypad.needsChoice { callFromKeypad(nil) }
    }
}
