import CGtk

/// GActions with a string parameter, for buttons that name what they do in their template
/// (`action-name="keypad.press"`, `action-target="'5'"`) instead of each being an outlet.
@MainActor
public final class ActionGroup {
    public let group: GPointer

    /// A group the widgets inside `widget` reach as `prefix.NAME`.
    public init(insertedIn widget: GPointer, prefix: String) {
        group = raw(g_simple_action_group_new())
        gtk_widget_insert_action_group(widget.assumingMemoryBound(to: GtkWidget.self), prefix, cast(group))
        g_object_unref(group)
    }

    /// `name`, activated with a string (its button's target).
    public func add(_ name: String, _ handler: @escaping @MainActor (String) -> Void) {
        let action = g_simple_action_new(name, mc_variant_type_string())
        connect(raw(action), "activate") { (parameter: GPointer?) in
            guard let text = mc_variant_string(cast(parameter)) else { return }
            handler(String(cString: text))
        }
        g_action_map_add_action(cast(group), cast(raw(action)))
        g_object_unref(raw(action))
    }
}
