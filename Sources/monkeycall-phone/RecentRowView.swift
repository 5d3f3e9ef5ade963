import CGtk
import GObjectBoundary
import Localization
import PhoneModel

/// One row of Recents (recent-row.ui, MonkeyCallRecentRow): who, when and how, Add to Favorites,
/// Delete and Call Back. Made once per visible row; `show` fills it for the call it shows now.
@MainActor
final class RecentRowView: ListRow {
    static let template = WidgetTemplate(className: "MonkeyCallRecentRow", parent: gtk_box_get_type(),
                                         resource: GResourceBundle.ui("recent-row.ui"))

    let widget: GPointer
    var key = ""
    private let title: Label
    private let subtitle: Label
    private let details: Label
    private let call: Button

    /// Each action gets the Recents entry's id.
    init(callBack: @escaping (UInt64) -> Void, delete: @escaping (UInt64) -> Void, favorite: @escaping (UInt64) -> Void) {
        let template = Self.template
        widget = template.instantiate()
        title = template.child(widget, "title")
        subtitle = template.child(widget, "subtitle")
        details = template.child(widget, "details")
        call = template.child(widget, "call")
        onClicked(call, withKey: callBack)
        onClicked(template.child(widget, "delete"), withKey: delete)
        onClicked(template.child(widget, "favorite"), withKey: favorite)
    }

    func show(_ recent: RecentRow) {
        title.text = recent.title
        subtitle.text = [recent.subtitle, recent.time].filter { !$0.isEmpty }.joined(separator: " · ")
        details.text = recent.details
        if recent.missed { title.addCSSClass("error") } else { title.removeCSSClass("error") }
        root.setAccessibleLabel(recent.accessibleLabel)
        call.setAccessibleLabel(tr("Call back %1$s", recent.title))
    }
}
