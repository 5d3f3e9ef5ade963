import CGtk
import GObjectBoundary
import Localization
import PhoneModel

/// Recents (recents-page.ui, MonkeyCallRecentsPage): All or Missed, Clear All (asked first), and
/// a row per call (RecentRowView), more loaded at the bottom; the missed count on its tab.
@MainActor
final class RecentsPage {
    static let template = WidgetTemplate(className: "MonkeyCallRecentsPage", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("recents-page.ui"))

    /// After the missed count changed (the window marks them seen when Recents is in view).
    var onMissedCountChange: () -> Void = {}
    private let page: GPointer
    private let model: PhoneModel
    private let tab: ViewStackPage
    private let stack: Stack
    private let empty: StatusPage
    private let missed: ToggleButton
    private var list: ListController<RecentRowView>!

    /// `tab`: the page's place in the view switcher, which shows the missed count.
    init(_ widget: AnyWidget, tab: ViewStackPage, model: PhoneModel) {
        page = Self.template.checked(widget.object)
        self.model = model
        self.tab = tab
        let template = Self.template
        stack = template.child(page, "stack")
        empty = template.child(page, "empty")
        missed = template.child(page, "missed")
        let scroll: ScrolledWindow = template.child(page, "scroll")
        let clear: Button = template.child(page, "clear")
        let recents = model.recents
        list = ListController(list: template.child(page, "list"), make: {
            RecentRowView(callBack: { id in AppTask.start { if let uuid = await recents.callBack(id) { model.calls.show(uuid) } } },
                          delete: { id in AppTask.start { await recents.delete(id) } },
                          favorite: { id in
                              guard let entry = recents.entry(id) else { return }
                              AppTask.start { await model.favorites.add(recent: entry) }
                          })
        }, bind: { row in
            guard let id = UInt64(row.key), let entry = recents.entry(id) else { return }
            row.show(RecentsModel.row(entry))
        })
        recents.onChange = { [unowned self] in
            let rows = recents.rows
            self.list.show(rows.map { String($0.id) })
            self.stack.visibleChildName = rows.isEmpty ? "empty" : "list"
            self.empty.title = recents.filter == .missed ? tr("No Missed Calls") : tr("No Recent Calls")
        }
        recents.onMissedCountChange = { [unowned self] in
            let count = recents.missedCount
            self.tab.badgeNumber = count
            self.tab.needsAttention = count > 0
            let label = count > 0 ? trn("Missed (%d)", "Missed (%d)", Int(count)) : tr("Missed")
            self.missed.setAccessibleLabel(label)
            self.missed.label = label
            self.onMissedCountChange()
        }
        missed.onToggled { [unowned self] in recents.filter = self.missed.isActive ? .missed : .all }
        scroll.onBottomReached { AppTask.start { await recents.loadMore() } }
        clear.onClicked { [unowned self] in self.askToClear() }
        recents.onChange()
    }

    /// Recents is in view in the active window: the missed calls are seen.
    func viewed() {
        guard model.recents.missedCount > 0 else { return }
        AppTask.start { await self.model.recents.markSeen() }
    }

    private func askToClear() {
        let window = gtk_widget_get_root(page.assumingMemoryBound(to: GtkWidget.self)).map { UnsafeMutableRawPointer($0) }
        let dialog = adw_message_dialog_new(cast(window), tr("Clear All Recents?"), tr("Every recent call is forgotten. This cannot be undone."))
        adw_message_dialog_add_response(cast(raw(dialog)), "cancel", tr("Cancel"))
        adw_message_dialog_add_response(cast(raw(dialog)), "clear", tr("Clear All"))
        adw_message_dialog_set_response_appearance(cast(raw(dialog)), "clear", ADW_RESPONSE_DESTRUCTIVE)
        adw_message_dialog_set_close_response(cast(raw(dialog)), "cancel")
        connect(raw(dialog), "response") { [unowned self] (response: GPointer?) in
            guard let response, String(cString: response.assumingMemoryBound(to: CChar.self)) == "clear" else { return }
            AppTask.start { await self.model.recents.clear() }
        }
        gtk_window_present(cast(raw(dialog)))
    }
}
