import CGtk
import GObjectBoundary
import Localization
import PhoneModel

/// Favorites (favorites-page.ui, MonkeyCallFavoritesPage): a row per favorite (FavoriteRowView),
/// called or removed from its row; a page saying there are none.
@MainActor
final class FavoritesPage {
    static let template = WidgetTemplate(className: "MonkeyCallFavoritesPage", parent: adw_bin_get_type(),
                                         resource: GResourceBundle.ui("favorites-page.ui"))

    private let stack: Stack
    private var list: ListController<FavoriteRowView>!

    init(_ widget: AnyWidget, model: PhoneModel) {
        let page = Self.template.checked(widget.object)
        stack = Self.template.child(page, "stack")
        let favorites = model.favorites
        list = ListController(list: Self.template.child(page, "list"), make: {
            FavoriteRowView(call: { id in AppTask.start { if let uuid = await favorites.call(id) { model.calls.show(uuid) } } },
                            remove: { id in AppTask.start { await favorites.remove(id) } })
        }, bind: { row in
            guard let shown = favorites.rows.first(where: { String($0.id) == row.key }) else { return }
            row.show(shown)
        })
        favorites.onChange = { [unowned self] in
            let rows = favorites.rows
            self.list.show(rows.map { String($0.id) })
            self.stack.visibleChildName = rows.isEmpty ? "empty" : "list"
        }
        favorites.onChange()
    }
}
