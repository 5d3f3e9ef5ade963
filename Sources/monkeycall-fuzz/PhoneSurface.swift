import DBus
import MonkeyCallAPI

/// The Phone app's D-Bus surface (`org.monkeycall.Phone` at `/org/monkeycall/Phone`), as GLib's
/// GApplication serves it for `monkeycall-phone`: `org.freedesktop.Application` (Activate and
/// ActivateAction from `Desktop.Application`, and Open, which the Desktop Entry specification
/// lists and the Phone app does not handle), and GApplication's own `org.gtk.Actions` and
/// `org.gtk.Application` with the same actions (`app.call`, `app.show-call`, `app.search`).
/// Not MonkeyCall's contract: what GLib answers is what GLib documents.
enum PhoneSurface {
    static let open = MethodSpec(Desktop.Application.interface, "Open", in: Arg("uris", [String].self),
                                 Arg("platform_data", [String: DBusValue].self), doc: """
        opens the URIs; the Phone app opens none (GLib answers NotSupported).
        """, errors: [DBusError.Name.notSupported])

    static let application = InterfaceSpec(Desktop.Application.interface, doc: """
        org.freedesktop.Application: the Desktop Entry specification's, with Open.
        """, members: [Desktop.Application.activate, Desktop.Application.activateAction, open])

    static let gtkActionsInterface = "org.gtk.Actions"
    static let gtkActions = InterfaceSpec(gtkActionsInterface, doc: """
        org.gtk.Actions: GApplication's exported actions.
        """, members: [
        MethodSpec(gtkActionsInterface, "Activate", in: Arg("action_name", String.self), Arg("parameter", [DBusValue].self),
                   Arg("platform_data", [String: DBusValue].self), doc: "runs an action."),
        MethodSpec(gtkActionsInterface, "SetState", in: Arg("action_name", String.self), Arg("value", DBusValue.self),
                   Arg("platform_data", [String: DBusValue].self), doc: "changes an action's state (the Phone app's have none)."),
        MethodSpec(gtkActionsInterface, "Describe", in: Arg("action_name", String.self), out: Arg("description", DBusValue.self),
                   doc: "an action's enabled flag, parameter type and state."),
    ])

    static let gtkApplicationInterface = "org.gtk.Application"
    static let gtkApplication = InterfaceSpec(gtkApplicationInterface, doc: """
        org.gtk.Application: GApplication's own.
        """, members: [
        MethodSpec(gtkApplicationInterface, "Activate", in: Arg("platform_data", [String: DBusValue].self), doc: "brings the app forward."),
        MethodSpec(gtkApplicationInterface, "Open", in: Arg("uris", [String].self), Arg("hint", String.self),
                   Arg("platform_data", [String: DBusValue].self), doc: "opens the URIs (NotSupported here)."),
        PropertySpec(gtkApplicationInterface, "Busy", Bool.self, doc: "whether the app is busy."),
    ])

    /// The interfaces fuzzed.
    static let interfaces: [InterfaceSpec] = [application, gtkActions, gtkApplication]

    /// How often a method of the app is chosen, against 3 for each of the daemon's: its actions
    /// most, GApplication's own interfaces (the same code behind) least; nil for the daemon's.
    static func weight(of member: MemberDescription) -> Int? {
        switch (member.interface, member.name) {
        case (Desktop.Application.interface, "ActivateAction"): 8
        case (Desktop.Application.interface, _): 3
        case (gtkActionsInterface, "Activate"): 2
        case (gtkActionsInterface, _), (gtkApplicationInterface, _): 1
        default: nil
        }
    }

    /// The errors GLib documents for a member beyond the standard ones (`Recorder.isProper`):
    /// an app without `G_APPLICATION_HANDLES_OPEN` answers Open with NotSupported.
    static func documentedErrors(interface: String, member: String) -> Set<String> {
        member == "Open" ? [DBusError.Name.notSupported] : []
    }

    /// Other objects of the app's connection to aim at, and wrong ones.
    static let otherPaths: [ObjectPath] = ["/org/monkeycall/Phone/window", "/org/monkeycall/Phone/window/1", "/org/gtk/Settings", "/"]

    /// Good values for an action's string parameter.
    static let handles = ["+14085550142", "tel:+1-408-555-0142;ext=2", "tel:%2B442079460001", "020 7946 0001", "alice", "fuzz@example.org",
                          "+1 (408) 555-0199", "911", ""]
    static let queries = ["ada", "Zoë", "grace hop", "+44 20 7946", "0161", "", "a"]
    static let uris = ["tel:+14085550142", "monkeycall:alice", "monkeycall://bob?video=1", "file:///etc/passwd", "https://example.org", "tel:"]
}
