import CGtk
import GObjectBoundary
import Localization
import MonkeyCallAPI
import PhoneModel

/// Contacts (contacts-page.ui, MonkeyCallContactsPage): a search of the user's address book and
/// a row per contact found (ContactRowView), each number called or added to Favorites.
@MainActor
final class ContactsPage {
    static let template = WidgetTemplate(className: "MonkeyCallContactsPage", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("contacts-page.ui"))

    /// Calls a number through the keypad (the window's: it shows the Keypad).
    var onDial: (String) -> Void = { _ in }
    private let stack: Stack
    private let empty: StatusPage
    private let searchEntry: SearchEntry
    private var list: ListController<ContactRowView>!

    init(_ widget: AnyWidget, model: PhoneModel) {
        let page = Self.template.checked(widget.object)
        let template = Self.template
        stack = template.child(page, "stack")
        empty = template.child(page, "empty")
        searchEntry = template.child(page, "search")
        let contacts = model.contacts
        list = ListController(list: template.child(page, "list"), make: { [unowned self] in
            ContactRowView(call: { number in self.onDial(number) }, favorite: { contact, number in
                let keypad = model.keypad
                let app = keypad.apps.first { $0.name == keypad.remembered } ?? keypad.apps.first
                AppTask.start {
                    await model.favorites.add(handle: number, handleType: Telephony1.HandleTypes.phoneNumber, name: contact, app: app?.name ?? "")
                }
            })
        }, bind: { row in
            guard let contact = contacts.rows.first(where: { $0.id == row.key }) else { return }
            row.show(contact)
        })
        contacts.onChange = { [unowned self] in
            self.list.show(contacts.rows.map(\.id))
            self.stack.visibleChildName = contacts.rows.isEmpty ? "empty" : "list"
            let unsupported = contacts.availability == .unsupported
            self.empty.title = unsupported ? tr("Contacts Are Not Available") : tr("No Contacts Found")
            self.empty.setDescription(unsupported ? tr("This version of the MonkeyCall service cannot search the address book") : nil)
        }
        searchEntry.on("search-changed") { [unowned self] in
            let text = self.searchEntry.text
            AppTask.start { await contacts.search(text) }
        }
        contacts.onChange()
    }

    /// Searches for `query`, in the search field, which takes the keyboard.
    func search(_ query: String) {
        searchEntry.text = query
        searchEntry.grabFocus()
    }
}
