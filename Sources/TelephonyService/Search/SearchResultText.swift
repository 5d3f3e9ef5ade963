import Localization
import PeopleSearch
import ScreenText

/// What a person sees of a search result in GNOME Shell's overview and in KRunner: a title, a
/// line that says the number and which app will call, an icon. Every text through gettext.
enum SearchResultText {
    /// The name, else "Call NUMBER" (a typed number, an unnamed Recents entry).
    static func title(_ hit: SearchHit) -> String {
        let name = ScreenText.clean(hit.name).trimmingWhitespace()
        return name.isEmpty ? tr("Call %1$s", shown(hit)) : String(name.prefix(256))
    }

    /// "mobile +44 20 7946 0001 · with PyPhone"; for a typed number, only which app.
    static func description(_ hit: SearchHit, _ route: CallRoute) -> String {
        let app: String
        switch route {
        case .app(let calling): app = tr("with %1$s", ScreenText.clean(calling.label))
        case .choose: app = tr("choose the app")
        case .none: app = tr("no app can call it now")
        }
        if hit.name.trimmingWhitespace().isEmpty { return app }
        let number = hit.label.isEmpty ? shown(hit) : tr("%1$s %2$s", label(hit.label), shown(hit))
        return tr("%1$s · %2$s", number, app)
    }

    /// The number as the user knows it, cleaned for a screen.
    static func shown(_ hit: SearchHit) -> String {
        String(ScreenText.clean(hit.shown.isEmpty ? hit.handle : hit.shown).prefix(256))
    }

    /// A number's label, in the user's language.
    static func label(_ key: String) -> String {
        switch key {
        case "mobile": trc("phone number", "mobile")
        case "home": trc("phone number", "home")
        case "work": trc("phone number", "work")
        case "main": trc("phone number", "main")
        case "fax": trc("phone number", "fax")
        case "pager": trc("phone number", "pager")
        case "car": trc("phone number", "car")
        case "other": trc("phone number", "other")
        default: key
        }
    }

    /// KRunner's action for an app.
    static func callWith(_ app: CallingApp) -> String {
        trc("button", "Call with %1$s", ScreenText.clean(app.label))
    }

    /// An icon of the freedesktop naming specification (as Adwaita and Breeze have them).
    static func iconName(_ hit: SearchHit) -> String {
        switch hit.source {
        case .number: "call-start-symbolic"
        case .favorite: "starred-symbolic"
        case .contact: "avatar-default-symbolic"
        case .recent: "document-open-recent-symbolic"
        }
    }
}
