import CGtk

/// A GObject of one GTK class, as a template's outlet: the class is checked once, when the outlet
/// is taken (`WidgetTemplate.child`), and what Swift does with it afterwards is that class's API
/// only (a label's text, a stack's visible page), not an untyped pointer cast at each use.
@MainActor
public protocol GObjectType {
    /// The GType the object must be an instance of.
    static var gType: GType { get }
    var object: GPointer { get }
    init(unchecked object: GPointer)
}

extension GObjectType {
    /// `object` as this type; another class is the program's bug (`what` names it).
    public init(checking object: GPointer, what: String) {
        guard g_type_check_instance_is_a(object.assumingMemoryBound(to: GTypeInstance.self), Self.gType) != 0 else {
            let found = String(cString: g_type_name(object.assumingMemoryBound(to: GTypeInstance.self).pointee.g_class.pointee.g_type))
            fatalError("\(what) is a \(found), not a \(String(cString: g_type_name(Self.gType)))")
        }
        self.init(unchecked: object)
    }

    /// Connects `signal` with a handler that takes nothing (`clicked`, `toggled`, `changed`).
    public func on(_ signal: String, _ handler: @escaping Handler0) { connect(object, signal, handler) }

    /// Connects `notify::property`.
    public func onNotify(_ property: String, _ handler: @escaping Handler0) {
        connect(object, "notify::\(property)") { (_: GPointer?) in handler() }
    }
}

/// A GtkWidget's own API, for every widget outlet.
@MainActor
public protocol WidgetType: GObjectType {}

extension WidgetType {
    var widget: UnsafeMutablePointer<GtkWidget> { object.assumingMemoryBound(to: GtkWidget.self) }
    public var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        nonmutating set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }
    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        nonmutating set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }
    /// What a screen reader (and AT-SPI) reads for it.
    public func setAccessibleLabel(_ label: String) { mc_accessible_set_label(object, label) }
    public func addCSSClass(_ name: String) { gtk_widget_add_css_class(widget, name) }
    public func removeCSSClass(_ name: String) { gtk_widget_remove_css_class(widget, name) }
    public func grabFocus() { gtk_widget_grab_focus(widget) }
}

/// Any widget, for what only needs GtkWidget's API (a list row's root, a page).
public struct AnyWidget: WidgetType {
    public static var gType: GType { gtk_widget_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
}

public struct Label: WidgetType {
    public static var gType: GType { gtk_label_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var text: String {
        get { String(cString: gtk_label_get_text(opaque(object))) }
        nonmutating set { gtk_label_set_text(opaque(object), newValue) }
    }
}

/// A GtkButton or a subclass of it (GtkToggleButton): its label and `clicked`.
public protocol ButtonType: WidgetType {}

extension ButtonType {
    public var label: String {
        get { gtk_button_get_label(cast(object)).map { String(cString: $0) } ?? "" }
        nonmutating set { gtk_button_set_label(cast(object), newValue) }
    }
    public func onClicked(_ handler: @escaping Handler0) { on("clicked", handler) }
}

public struct Button: ButtonType {
    public static var gType: GType { gtk_button_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
}

public struct ToggleButton: ButtonType {
    public static var gType: GType { gtk_toggle_button_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var isActive: Bool {
        get { gtk_toggle_button_get_active(cast(object)) != 0 }
        nonmutating set { gtk_toggle_button_set_active(cast(object), newValue ? 1 : 0) }
    }
    public func onToggled(_ handler: @escaping Handler0) { on("toggled", handler) }
}

public struct CheckButton: WidgetType {
    public static var gType: GType { gtk_check_button_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var isActive: Bool { gtk_check_button_get_active(cast(object)) != 0 }
}

/// A GtkStack: one named page shown at a time.
public struct Stack: WidgetType {
    public static var gType: GType { gtk_stack_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var visibleChildName: String {
        get { gtk_stack_get_visible_child_name(opaque(object)).map { String(cString: $0) } ?? "" }
        nonmutating set { gtk_stack_set_visible_child_name(opaque(object), newValue) }
    }
}

/// libadwaita's view stack: the window's pages, in its view switcher.
public struct ViewStack: WidgetType {
    public static var gType: GType { adw_view_stack_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var visibleChildName: String {
        get { adw_view_stack_get_visible_child_name(opaque(object)).map { String(cString: $0) } ?? "" }
        nonmutating set { adw_view_stack_set_visible_child_name(opaque(object), newValue) }
    }
}

/// One page of a view stack: its switcher button's badge.
public struct ViewStackPage: GObjectType {
    public static var gType: GType { adw_view_stack_page_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var badgeNumber: UInt32 {
        get { adw_view_stack_page_get_badge_number(opaque(object)) }
        nonmutating set { adw_view_stack_page_set_badge_number(opaque(object), newValue) }
    }
    public var needsAttention: Bool {
        get { adw_view_stack_page_get_needs_attention(opaque(object)) != 0 }
        nonmutating set { adw_view_stack_page_set_needs_attention(opaque(object), newValue ? 1 : 0) }
    }
}

public struct ListView: WidgetType {
    public static var gType: GType { gtk_list_view_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
}

/// A GtkScrolledWindow: `edge-reached` tells when the view reached an end.
public struct ScrolledWindow: WidgetType {
    public static var gType: GType { gtk_scrolled_window_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public func onBottomReached(_ handler: @escaping Handler0) {
        connectPosition(object, "edge-reached") { edge in if edge == GTK_POS_BOTTOM.rawValue { handler() } }
    }
}

/// A one-line text field (GtkEntry, GtkSearchEntry: both GtkEditable).
public protocol EditableType: WidgetType {}

extension EditableType {
    public var text: String {
        get { String(cString: gtk_editable_get_text(opaque(object))) }
        nonmutating set { gtk_editable_set_text(opaque(object), newValue) }
    }
    /// The cursor's position; -1 puts it at the end.
    public func setPosition(_ position: Int32) { gtk_editable_set_position(opaque(object), position) }
}

public struct Entry: EditableType {
    public static var gType: GType { gtk_entry_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
}

public struct SearchEntry: EditableType {
    public static var gType: GType { gtk_search_entry_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
}

public struct Revealer: WidgetType {
    public static var gType: GType { gtk_revealer_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var revealsChild: Bool {
        get { gtk_revealer_get_reveal_child(opaque(object)) != 0 }
        nonmutating set { gtk_revealer_set_reveal_child(opaque(object), newValue ? 1 : 0) }
    }
    /// Whether the child is shown now (its transition over).
    public var isChildRevealed: Bool { gtk_revealer_get_child_revealed(opaque(object)) != 0 }
}

public struct StatusPage: WidgetType {
    public static var gType: GType { adw_status_page_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var title: String {
        get { adw_status_page_get_title(opaque(object)).map { String(cString: $0) } ?? "" }
        nonmutating set { adw_status_page_set_title(opaque(object), newValue) }
    }
    /// nil: none.
    public func setDescription(_ text: String?) { adw_status_page_set_description(opaque(object), text) }
}

public struct Box: WidgetType {
    public static var gType: GType { gtk_box_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public func append(_ child: GPointer) { gtk_box_append(cast(object), cast(child)) }
    public func removeAll() {
        while let child = gtk_widget_get_first_child(cast(object)) { gtk_box_remove(cast(object), child) }
    }
}

public struct Avatar: WidgetType {
    public static var gType: GType { adw_avatar_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var text: String {
        get { adw_avatar_get_text(opaque(object)).map { String(cString: $0) } ?? "" }
        nonmutating set { adw_avatar_set_text(opaque(object), newValue) }
    }
}

public struct ToastOverlay: WidgetType {
    public static var gType: GType { adw_toast_overlay_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    /// Shows `text` in a toast.
    public func show(_ text: String) { adw_toast_overlay_add_toast(opaque(object), adw_toast_new(text)) }
}

/// A GtkWindow (the template class's instance itself, for a window made from a template).
public struct Window: WidgetType {
    public static var gType: GType { gtk_window_get_type() }
    public let object: GPointer
    public init(unchecked object: GPointer) { self.object = object }
    public var window: UnsafeMutablePointer<GtkWindow> { object.assumingMemoryBound(to: GtkWindow.self) }
    public func present() { gtk_window_present(window) }
    public func close() { gtk_window_close(window) }
    public var isActive: Bool { gtk_window_is_active(window) != 0 }
}
