import Foundation
import PackagePlugin

/// Compiles a target's `ui/*.gresource.xml` with glib-compile-resources at build time and embeds
/// the bundle in the program, as GNOME apps do (meson's gnome.compile_resources; Fractal, Amberol
/// and Shortwave's `gio::resources_register_include!`): the program registers it at start-up
/// (`GResourceBundle.register`) and GTK reads the `.ui` files from it, never from a folder.
///
/// SwiftPM (tools version 6.0) compiles only the Swift a plugin makes: glib-compile-resources' C
/// (`--generate-source`) is dropped with "C source file generation not enabled", and compiled
/// only under the experimental `swift-tools-version: 6.3;(experimentalCGen)`. So the bundle
/// (`--target`: GVariant bytes, each file compressed) goes into a Swift file as a base64 string
/// literal, which GLib decodes once at start-up.
@main
struct CompileGResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        // The target at its default path, Sources/NAME (Target.directoryURL needs tools version 6.1).
        let folder = context.package.directoryURL.appending(path: "Sources").appending(path: target.name).appending(path: "ui")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        let manifests = files.filter { $0.lastPathComponent.hasSuffix(".gresource.xml") }
        guard manifests.count == 1, let manifest = manifests.first else {
            throw PluginError("\(target.name): expected one ui/*.gresource.xml, found \(manifests.count)")
        }
        let compile = try Self.program("glib-compile-resources", package: "libglib2.0-dev-bin")
        let base64 = try Self.program("base64", package: "coreutils")
        let bundle = context.pluginWorkDirectoryURL.appending(path: "resources.gresource")
        let source = context.pluginWorkDirectoryURL.appending(path: "GResourceBundle+Compiled.swift")
        // sh: the bundle, then the Swift file around its base64 (one line: one literal).
        let script = """
            set -eu
            "$1" --sourcedir="$2" --target="$4" "$3"
            encoded="$("$5" -w 0 "$4")"
            printf '// Made at build time by Plugins/CompileGResources from ui/%s (glib-compile-resources): not in git.\\n%s\\n    static let compiled = "%s"\\n}\\n' \\
                "${3##*/}" 'extension GResourceBundle {' "$encoded" > "$6"
            """
        return [.buildCommand(
            displayName: "Compiling \(manifest.lastPathComponent) (glib-compile-resources)",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", script, "sh", compile.path, folder.path, manifest.path, bundle.path, base64.path, source.path],
            inputFiles: files.filter { $0.pathExtension == "ui" || $0 == manifest }.sorted { $0.path < $1.path },
            outputFiles: [source])]
    }

    /// `name` on PATH (SwiftPM runs plugins with the user's).
    static func program(_ name: String, package: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin"] {
            let candidate = URL(fileURLWithPath: folder).appending(path: name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw PluginError("\(name) is not on PATH (Debian's \(package); scripts/deps installs it)")
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
