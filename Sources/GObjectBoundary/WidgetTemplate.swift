import CGtk

/// A GTK widget class whose instances are built from a `.ui` template in the program's GResource:
/// GTK's composite widgets, as C makes them with G_DEFINE_TYPE and
/// gtk_widget_class_set_template_from_resource, and Rust with `#[derive(CompositeTemplate)]`.
///
/// The class adds nothing to its parent's instance or class struct; what the widget does lives
/// in a Swift type beside it, which takes its template children once, typed (`child`), when it
/// wraps an instance. Every object with an `id` in the template is bound (C's
/// gtk_widget_class_bind_template_child without a struct field), so that the Swift side names
/// each one once, where it takes it.
///
/// A template may use other template classes by name (`<object class="MonkeyCallRecentsPage">`):
/// make theirs first (`requires`), as C's class_init calls g_type_ensure.
@MainActor
public final class WidgetTemplate {
    public let type: GType
    /// The template's resource path and the ids bound, kept for class_init (GLib keeps the pointer).
    private final class ClassData {
        let resource: String
        let ids: [String]
        init(resource: String, ids: [String]) {
            self.resource = resource
            self.ids = ids
        }
    }

    /// Registers `className`, a subclass of `parent` built from the template at `resource`.
    /// `requires`: the template classes the template names, registered before it is first built.
    public init(className: String, parent: GType, resource: String, requires: [WidgetTemplate] = []) {
        _ = requires  // made by now: evaluating the argument ran their initializers
        guard let xml = GResources.text(resource) else { fatalError("no template at \(resource) in the program's resources") }
        let data = ClassData(resource: resource, ids: Self.ids(in: xml))
        var query = GTypeQuery()
        g_type_query(parent, &query)
        guard query.type != 0 else { fatalError("\(className): its parent type is not a class") }
        var info = GTypeInfo()
        info.class_size = guint16(query.class_size)
        info.instance_size = guint16(query.instance_size)
        info.class_init = { klass, data in
            let data = Unmanaged<ClassData>.fromOpaque(data!).takeUnretainedValue()
            let widgetClass = klass!.assumingMemoryBound(to: GtkWidgetClass.self)
            gtk_widget_class_set_template_from_resource(widgetClass, data.resource)
            for id in data.ids { gtk_widget_class_bind_template_child_full(widgetClass, id, 0, 0) }
        }
        // Released never: a GType lives as long as the process.
        info.class_data = UnsafeRawPointer(Unmanaged.passRetained(data).toOpaque())
        info.instance_init = { instance, _ in
            gtk_widget_init_template(UnsafeMutableRawPointer(instance)?.assumingMemoryBound(to: GtkWidget.self))
        }
        type = g_type_register_static(parent, className, &info, GTypeFlags(rawValue: 0))
        guard type != 0 else { fatalError("\(className) could not be registered (registered twice?)") }
    }

    /// The ids of the objects a template declares (`<object … id="…">`): what `init` binds.
    static func ids(in xml: String) -> [String] {
        var ids: [String] = []
        var rest = xml[...]
        while let tag = rest.firstRange(of: "<object ") {
            rest = rest[tag.upperBound...]
            guard let end = rest.firstIndex(of: ">") else { break }
            let attributes = rest[..<end]
            if let start = attributes.firstRange(of: " id=\"") ?? attributes.firstRange(of: "\tid=\""),
               let close = attributes[start.upperBound...].firstIndex(of: "\"") {
                ids.append(String(attributes[start.upperBound..<close]))
            }
            rest = rest[end...]
        }
        return ids
    }

    /// A new instance, its template built (the widgets the program makes itself: windows, rows).
    /// The caller owns the reference (a window's is the toplevel list's; a row's goes to its list).
    public func instantiate() -> GPointer {
        guard let object = g_object_new_with_properties(type, 0, nil, nil) else { fatalError("cannot make an instance of \(typeName)") }
        return UnsafeMutableRawPointer(object)
    }

    public var typeName: String { String(cString: g_type_name(type)) }

    /// The object `id` of `widget`'s template, as `T`; a missing id or another class is the
    /// program's bug, found here, when the Swift type wraps the widget, not where it is used.
    public func child<T: GObjectType>(_ widget: GPointer, _ id: String, as _: T.Type = T.self) -> T {
        guard let object = gtk_widget_get_template_child(widget.assumingMemoryBound(to: GtkWidget.self), type, id) else {
            fatalError("no object '\(id)' in \(typeName)'s template")
        }
        return T(checking: UnsafeMutableRawPointer(object), what: "'\(id)' in \(typeName)'s template")
    }

    /// `widget` when it is an instance of this class (the one a parent template made).
    public func checked(_ widget: GPointer) -> GPointer {
        guard g_type_check_instance_is_a(widget.assumingMemoryBound(to: GTypeInstance.self), type) != 0 else {
            fatalError("not a \(typeName)")
        }
        return widget
    }
}
