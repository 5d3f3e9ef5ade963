import GObjectBoundary

/// The program's GResource: the `.ui` templates of ui/, compiled in at build time by
/// Plugins/CompileGResources (which adds `compiled`, the bundle in base64), as GNOME apps ship
/// theirs. Nothing is read from a folder: the package ships no `.ui` files.
enum GResourceBundle {
    /// Where ui/monkeycall-phone.gresource.xml puts the `.ui` files.
    static let uiPrefix = "/org/monkeycall/Phone/ui/"

    /// Registers the bundle, once, before any window is made.
    static func register() { GResources.register(base64: compiled) }

    /// The resource path of the `.ui` file `name`.
    static func ui(_ name: String) -> String { uiPrefix + name }
}
