import GObjectBoundary
import Localization
import PhoneModel

/// One row of Favorites (favorite-row.ui, MonkeyCallFavoriteRow): the name and how it is called,
/// Call and Remove. `show` fills it for the favorite it shows now.
final class FavoriteRowView: ListRowView {
    static let template = rowTemplate("MonkeyCallFavoriteRow", ui: "favorite-row.ui")

    private let subtitle: Label
    private let call: Button
    private let remove: Button

    /// `call` and `remove` get the favorite's id.
    init(call onCall: @escaping (UInt64) -> Void, remove onRemove: @escaping (UInt64) -> Void) {
        let template = Self.template
        let widget = template.instantiate()
        subtitle = template.child(widget, "subtitle")
        call = template.child(widget, "call")
        remove = template.child(widget, "remove")
        super.init(widget, of: template)
        onClicked(call, withKey: onCall)
        onClicked(remove, withKey: onRemove)
    }

    func show(_ favorite: FavoriteRow) {
        show(title: favorite.title, accessibleLabel: favorite.accessibleLabel)
        subtitle.text = favorite.subtitle
        call.setAccessibleLabel(tr("Call %1$s", favorite.title))
        remove.setAccessibleLabel(tr("Remove %1$s from Favorites", favorite.title))
    }
}
