import CGtk
import GObjectBoundary
import Localization
import PhoneModel

/// One row of Favorites (favorite-row.ui, MonkeyCallFavoriteRow): the name and how it is called,
/// Call and Remove. Made once per visible row; `show` fills it for the favorite it shows now.
@MainActor
final class FavoriteRowView: ListRow {
    static let template = WidgetTemplate(className: "MonkeyCallFavoriteRow", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("favorite-row.ui"))

    let widget: GPointer
    var key = ""
    private let title: Label
    private let subtitle: Label
    private let call: Button
    private let remove: Button

    /// `call` and `remove` get the favorite's id.
    init(call onCall: @escaping (UInt64) -> Void, remove onRemove: @escaping (UInt64) -> Void) {
        let template = Self.template
        widget = template.instantiate()
        title = template.child(widget, "title")
        subtitle = template.child(widget, "subtitle")
        call = template.child(widget, "call")
        remove = template.child(widget, "remove")
        onClicked(call, withKey: onCall)
        onClicked(remove, withKey: onRemove)
    }

    func show(_ favorite: FavoriteRow) {
        title.text = favorite.title
        subtitle.text = favorite.subtitle
        root.setAccessibleLabel(favorite.accessibleLabel)
        call.setAccessibleLabel(tr("Call %1$s", favorite.title))
        remove.setAccessibleLabel(tr("Remove %1$s from Favorites", favorite.title))
    }
}
