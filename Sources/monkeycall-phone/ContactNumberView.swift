import CGtk
import GObjectBoundary
import Localization
import PhoneModel

/// One of a contact's numbers (contact-number-row.ui, MonkeyCallContactNumberRow): the number and
/// its label, Add to Favorites and Call. Made for each number a contact row shows.
@MainActor
struct ContactNumberView {
    static let template = WidgetTemplate(className: "MonkeyCallContactNumberRow", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("contact-number-row.ui"))

    let widget: GPointer

    init(_ number: ContactNumber, call: @escaping @MainActor () -> Void, favorite: @escaping @MainActor () -> Void) {
        let template = Self.template
        widget = template.instantiate()
        let label: Label = template.child(widget, "number")
        let kind: Label = template.child(widget, "label")
        let callButton: Button = template.child(widget, "call")
        let favoriteButton: Button = template.child(widget, "favorite")
        label.text = number.number
        kind.text = number.label
        callButton.setAccessibleLabel(tr("Call %1$s", number.number))
        favoriteButton.setAccessibleLabel(tr("Add %1$s to Favorites", number.number))
        callButton.onClicked(call)
        favoriteButton.onClicked(favorite)
    }
}
