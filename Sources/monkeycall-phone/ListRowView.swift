import CGtk
import GObjectBoundary

/// What every row of the app's lists is (FavoriteRowView, RecentRowView, ContactRowView): an
/// instance of its GtkBox template, made once per visible row and filled again for each key it
/// shows, whose heading label `title` names the entry.
@MainActor
class ListRowView: ListRow {
    let widget: GPointer
    var key = ""
    let title: Label

    /// The template of a row class: a GtkBox subclass built from the `.ui` file `file`.
    static func rowTemplate(_ className: String, ui file: String) -> WidgetTemplate {
        WidgetTemplate(className: className, parent: gtk_box_get_type(), resource: GResourceBundle.ui(file))
    }

    /// `widget`: a new instance of `template`, whose other outlets the subclass took first.
    init(_ widget: GPointer, of template: WidgetTemplate) {
        self.widget = widget
        title = template.child(widget, "title")
    }

    /// The title, and what a screen reader (and AT-SPI) says for the whole row.
    func show(title text: String, accessibleLabel: String) {
        title.text = text
        root.setAccessibleLabel(accessibleLabel)
    }
}
