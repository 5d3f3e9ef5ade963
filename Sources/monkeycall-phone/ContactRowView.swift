import CGtk
import GObjectBoundary
import PhoneModel

/// One contact (contact-row.ui, MonkeyCallContactRow): the name, then a line per number
/// (ContactNumberView). Made once per visible row; `show` fills it for the contact it shows now.
@MainActor
final class ContactRowView: ListRow {
    static let template = WidgetTemplate(className: "MonkeyCallContactRow", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("contact-row.ui"))

    let widget: GPointer
    var key = ""
    private let title: Label
    private let numbers: Box
    private let call: (String) -> Void
    private let favorite: (_ contact: String, _ number: String) -> Void

    /// `call` gets a number; `favorite` the contact's name and a number.
    init(call: @escaping (String) -> Void, favorite: @escaping (_ contact: String, _ number: String) -> Void) {
        let template = Self.template
        widget = template.instantiate()
        title = template.child(widget, "title")
        numbers = template.child(widget, "numbers")
        self.call = call
        self.favorite = favorite
    }

    func show(_ contact: ContactRow) {
        title.text = contact.name
        root.setAccessibleLabel(contact.name)
        numbers.removeAll()
        for number in contact.numbers {
            let line = ContactNumberView(number, call: { [call] in call(number.number) },
                                         favorite: { [favorite] in favorite(contact.name, number.number) })
            numbers.append(line.widget)
        }
    }
}
