import CGtk

/// A GtkListView showing rows keyed by strings: a GtkStringList of keys with a
/// GtkSignalListItemFactory; the data stays in Swift. Each visible row is made from a `.ui`
/// file once (`setup`) and filled each time it shows another key (`bind`): a list of 10,000
/// keys makes only the rows on screen.
@MainActor
public final class ListController {
    /// A row made from the row file, and the key it shows now.
    @MainActor
    public final class Cell {
        public let ui: UIFile
        public var key = ""
        public init(ui: UIFile) { self.ui = ui }
        public subscript(_ id: String) -> GPointer { ui[id] }
    }

    public let list: GPointer
    private let strings: OpaquePointer
    private var count: UInt32 = 0

    /// `setup`: connect the row's buttons (read `cell.key` when pressed); `bind`: fill the row for `cell.key`.
    public init(list: GPointer, rowFile: String, domain: String, setup: @escaping (Cell) -> Void, bind: @escaping (Cell) -> Void) {
        self.list = list
        strings = gtk_string_list_new(nil)
        let factory = gtk_signal_list_item_factory_new()
        connect(raw(factory), "setup") { item in
            let cell = Cell(ui: UIFile(path: rowFile, domain: domain))
            gtk_list_item_set_child(opaque(item), cast(cell["row"]))
            setData(item, "cell", cell)
            setup(cell)
        }
        connect(raw(factory), "bind") { item in
            guard let cell = data(item, "cell", as: Cell.self), let object = gtk_list_item_get_item(opaque(item)) else { return }
            cell.key = String(cString: gtk_string_object_get_string(OpaquePointer(object)))
            bind(cell)
        }
        // The selection model takes the list; the view takes both.
        let selection = gtk_no_selection_new(OpaquePointer(g_object_ref(raw(strings))))
        gtk_list_view_set_factory(opaque(list), factory)
        gtk_list_view_set_model(opaque(list), selection)
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
