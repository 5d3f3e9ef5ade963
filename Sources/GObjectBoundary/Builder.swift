import CGtk

/// A GtkBuilder over one `.ui` file: the objects it made, by id.
@MainActor
public final class UIFile {
    public nonisolated(unsafe) let builder: OpaquePointer

    /// Loads `path`, translated in `domain`. A broken file is the program's bug: it stops with GTK's message.
    public init(path: String, domain: String) {
        builder = gtk_builder_new()
        gtk_builder_set_translation_domain(builder, domain)
        var error: UnsafeMutablePointer<GError>? = nil
        if gtk_builder_add_from_file(builder, path, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            fatalError("cannot load \(path): \(message)")
        }
    }

    /// The object with this id; a missing one is the program's bug.
    public subscript(_ id: String) -> GPointer {
        guard let object = gtk_builder_get_object(builder, id) else { fatalError("no object '\(id)' in the UI file") }
        return UnsafeMutableRawPointer(object)
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(builder)) }
}

/// Widgets made from a `.ui` string (a list row's template, made once per row).
@MainActor
public func build(_ xml: String, domain: String) -> OpaquePointer {
    let builder = gtk_builder_new()!
    gtk_builder_set_translation_domain(builder, domain)
    var error: UnsafeMutablePointer<GError>? = nil
    if gtk_builder_add_from_string(builder, xml, -1, &error) == 0 {
        fatalError("bad UI template: \(error.map { String(cString: $0.pointee.message) } ?? "")")
    }
    return builder
}

/// Widget conveniences that read as GTK's own names.
@MainActor
public enum Widget {
    public static func setText(_ label: GPointer?, _ text: String) { gtk_label_set_text(cast(label), text) }
    public static func setVisible(_ widget: GPointer?, _ visible: Bool) { gtk_widget_set_visible(cast(widget), visible ? 1 : 0) }
    public static func setSensitive(_ widget: GPointer?, _ sensitive: Bool) { gtk_widget_set_sensitive(cast(widget), sensitive ? 1 : 0) }
    public static func setLabel(_ widget: GPointer?, _ label: String) { mc_accessible_set_label(widget, label) }
    public static func setButtonLabel(_ button: GPointer?, _ label: String) { gtk_button_set_label(cast(button), label) }
    public static func setTooltip(_ widget: GPointer?, _ text: String) { gtk_widget_set_tooltip_text(cast(widget), text) }
    public static func addClass(_ widget: GPointer?, _ name: String) { gtk_widget_add_css_class(cast(widget), name) }
    public static func removeClass(_ widget: GPointer?, _ name: String) { gtk_widget_remove_css_class(cast(widget), name) }
    public static func editableText(_ editable: GPointer?) -> String { String(cString: gtk_editable_get_text(opaque(editable))) }
    public static func setEditableText(_ editable: GPointer?, _ text: String) { gtk_editable_set_text(opaque(editable), text) }
}
