import CGtk

/// A row of a `ListController`: a widget (made from its template) and the key it shows now.
@MainActor
public protocol ListRow: AnyObject {
    /// The row's widget, the list item's child.
    var widget: GPointer { get }
    /// The key the row shows; set before each `bind`.
    var key: String { get set }
}

extension ListRow {
    /// The row's widget as an outlet (its accessible label).
    public var root: AnyWidget { AnyWidget(unchecked: widget) }

    /// Connects `button` to `handler`, given the key the row shows when it is pressed read as an
    /// `ID` (a row of Favorites or Recents is keyed by its entry's id); nothing once the row is
    /// gone, or for a key that does not read as one.
    public func onClicked<ID: LosslessStringConvertible>(_ button: Button, withKey handler: @escaping (ID) -> Void) {
        button.onClicked { [weak self] in if let id = self.flatMap({ ID($0.key) }) { handler(id) } }
    }
}

/// A GtkListView showing rows keyed by strings: a GtkStringList of keys with a
/// GtkSignalListItemFactory; the data stays in Swift. Each visible row is made once (`make`: its
/// template, its buttons connected, reading `key` when pressed) and filled each time it shows
/// another key (`bind`): a list of 10,000 keys makes only the rows on screen.
@MainActor
public final class ListController<Row: ListRow> {
    public let list: ListView
    private let strings: OpaquePointer
    private var count: UInt32 = 0

    /// A list item's row, kept with the item (released with it).
    private final class Holder {
        let row: Row
        init(_ row: Row) { self.row = row }
    }

    public init(list: ListView, make: @escaping () -> Row, bind: @escaping (Row) -> Void) {
        self.list = list
        strings = gtk_string_list_new(nil)
        let factory = gtk_signal_list_item_factory_new()
        connect(raw(factory), "setup") { item in
            let row = make()
            gtk_list_item_set_child(opaque(item), cast(row.widget))
            setData(item, "row", Holder(row))
        }
        connect(raw(factory), "bind") { item in
            guard let row = data(item, "row", as: Holder.self)?.row, let object = gtk_list_item_get_item(opaque(item)) else { return }
            row.key = String(cString: gtk_string_object_get_string(OpaquePointer(object)))
            bind(row)
        }
        // The selection model takes the list; the view takes both.
        let selection = gtk_no_selection_new(OpaquePointer(g_object_ref(raw(strings))))
        gtk_list_view_set_factory(opaque(list.object), factory)
        gtk_list_view_set_model(opaque(list.object), selection)
        g_object_unref(raw(factory))
        g_object_unref(raw(selection))
    }

    /// Shows `keys`, in order; every visible row is bound again.
    public func show(_ keys: [String]) {
        var pointers: [UnsafePointer<CChar>?] = keys.map { UnsafePointer(strdup($0)) }
        pointers.append(nil)
        pointers.withUnsafeBufferPointer { buffer in
            gtk_string_list_splice(strings, 0, count, buffer.baseAddress)
        }
        for pointer in pointers { free(UnsafeMutablePointer(mutating: pointer)) }
        count = UInt32(keys.count)
    }
}
