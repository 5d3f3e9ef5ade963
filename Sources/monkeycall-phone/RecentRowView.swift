import GObjectBoundary
import Localization
import PhoneModel

/// One row of Recents (recent-row.ui, MonkeyCallRecentRow): who, when and how, Add to Favorites,
/// Delete and Call Back. `show` fills it for the call it shows now.
final class RecentRowView: ListRowView {
    static let template = rowTemplate("MonkeyCallRecentRow", ui: "recent-row.ui")

    private let subtitle: Label
    private let details: Label
    private let call: Button

    /// Each action gets the Recents entry's id.
    init(callBack: @escaping (UInt64) -> Void, delete: @escaping (UInt64) -> Void, favorite: @escaping (UInt64) -> Void) {
        let template = Self.template
        let widget = template.instantiate()
        subtitle = template.child(widget, "subtitle")
        details = template.child(widget, "details")
        call = template.child(widget, "call")
        super.init(widget, of: template)
        onClicked(call, withKey: callBack)
        onClicked(template.child(widget, "delete"), withKey: delete)
        onClicked(template.child(widget, "favorite"), withKey: favorite)
    }

    func show(_ recent: RecentRow) {
        show(title: recent.title, accessibleLabel: recent.accessibleLabel)
        subtitle.text = [recent.subtitle, recent.time].filter { !$0.isEmpty }.joined(separator: " · ")
        details.text = recent.details
        if recent.missed { title.addCSSClass("error") } else { title.removeCSSClass("error") }
        call.setAccessibleLabel(tr("Call back %1$s", recent.title))
    }
}
