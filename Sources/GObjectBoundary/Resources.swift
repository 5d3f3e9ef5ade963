import CGtk

/// A program's GResource bundle (glib-compile-resources' `--target` output), compiled into the
/// program and registered at start-up: GTK then reads `.ui` templates from `resource://` paths.
public enum GResources {
    /// Registers the bundle given as base64 (how SwiftPM's plugin embeds it); a bundle that does
    /// not load is the build's bug.
    public static func register(base64: String) {
        var length: gsize = 0
        guard let data = g_base64_decode(base64, &length), length > 0 else { fatalError("the compiled GResource bundle is empty") }
        let bytes = g_bytes_new_take(data, length)
        defer { g_bytes_unref(bytes) }
        var error: UnsafeMutablePointer<GError>? = nil
        guard let resource = g_resource_new_from_data(bytes, &error) else {
            fatalError("the compiled GResource bundle does not load: \(error.map { String(cString: $0.pointee.message) } ?? "")")
        }
        g_resources_register(resource)
        g_resource_unref(resource)
    }

    /// The file at `path` in the registered bundles, whole.
    public static func text(_ path: String) -> String? {
        guard let bytes = g_resources_lookup_data(path, G_RESOURCE_LOOKUP_FLAGS_NONE, nil) else { return nil }
        defer { g_bytes_unref(bytes) }
        var size: gsize = 0
        guard let data = g_bytes_get_data(bytes, &size) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(size)), as: UTF8.self)
    }
}
