import GObjectBoundary
import PhoneModel

/// One contact (contact-row.ui, MonkeyCallContactRow): the name, then a line per number
/// (ContactNumberView). `show` fills it for the contact it shows now.
final class ContactRowView: ListRowView {
    static let template = rowTemplate("MonkeyCallContactRow", ui: "contact-row.ui")

    private let numbers: Box
    private let call: (String) -> Void
    private let favorite: (_ contact: String, _ number: String) -> Void

    /// `call` gets a number; `favorite` the contact's name and a number.
    init(call: @escaping (String) -> Void, favorite: @escaping (_ contact: String, _ number: String) -> Void) {
        let template = Self.template
        let widget = template.instantiate()
        numbers = template.child(widget, "numbers")
        self.call = call
        self.favorite = favorite
        super.init(widget, of: template)
    }

    func show(_ contact: ContactRow) {
        show(title: contact.name, accessibleLabel: contact.name)
        numbers.removeAll()
        for number in contact.numbers {
            let line = ContactNumberView(number, call: { [call] in call(number.number) },
                                         favorite: { [favorite] in favorite(contact.name, number.number) })
            numbers.append(line.widget)
        }
    }
}
