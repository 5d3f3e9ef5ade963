import DBus
import Foundation
import Logging
import MonkeyCallAPI
import TelephonyCore

/// CallKit's in-call app button: brings a call's app forward through its desktop entry, and tells
/// the provider (`DidRequestShowApp`) so that it can show that call. A D-Bus-activatable app
/// (`DBusActivatable=true`) gets `org.freedesktop.Application.Activate`; any other app's desktop
/// file is launched (`gio launch`), which for a running single-instance app raises its window.
/// The desktop file is read and the app launched off the service's queue.
final class AppActivation: @unchecked Sendable {
    static let applicationInterface = "org.freedesktop.Application"
    /// Where desktop files are looked up and `gio launch` waited for: off the service queue, and a
    /// serial queue rather than a global one (see `SerialTaskExecutor` for why that matters when idle).
    private static let desktopFiles = DispatchQueue(label: "org.monkeycall.activation", qos: .utility)

    private let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    /// On the service's queue: the user asked for `call`'s app.
    func show(_ call: Call) {
        guard let provider = context.switchboard.provider(call.provider) else { return }
        do {
            try context.connection.emit(Telephony1.Provider.didRequestShowApp, path: Telephony1.providerPath(provider.id.rawValue),
                                        call.uuid.apiString, destination: provider.owner)
        } catch {
            context.logger.error("cannot send \(Telephony1.Provider.didRequestShowApp.name) to provider \(provider.id): \(error)")
        }
        let entry = provider.configuration.desktopEntry
        guard !entry.isEmpty else { return }
        let id = entry.hasSuffix(".desktop") ? String(entry.dropLast(".desktop".count)) : entry
        let connection = context.connection, logger = context.logger
        Self.desktopFiles.async {
            guard let file = Self.desktopFile(id) else {
                logger.warning("cannot bring \(provider.name) forward: no desktop file \(id).desktop in the applications folders")
                return
            }
            if Self.isDBusActivatable(file) {
                Task(executorPreference: SerialTaskExecutor.shared) {
                    do {
                        _ = try await connection.call(destination: id, path: try Self.objectPath(of: id), interface: Self.applicationInterface,
                                                      member: "Activate", [.vardict([:])], timeout: .seconds(5))
                    } catch {
                        logger.warning("cannot activate \(id): \(error)")
                    }
                }
            } else {
                Self.launch(file, logger: logger)
            }
        }
    }

    /// The desktop file of `id` in `$XDG_DATA_HOME/applications`, then each of `$XDG_DATA_DIRS`.
    static func desktopFile(_ id: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.local/share"
        let dirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return ([home] + dirs).map { "\($0)/applications/\(id).desktop" }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// `DBusActivatable=true` in the `[Desktop Entry]` group.
    static func isDBusActivatable(_ file: String) -> Bool {
        DesktopEntry.value("DBusActivatable", inFile: file) == "true"
    }

    /// The Desktop Entry spec's object path for an app id: "/" then dots as slashes, dashes as underscores.
    static func objectPath(of id: String) throws -> ObjectPath {
        try ObjectPath("/" + id.replacingOccurrences(of: ".", with: "/").replacingOccurrences(of: "-", with: "_"))
    }

    private static func launch(_ file: String, logger: Logger) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gio")
        process.arguments = ["launch", file]
        do {
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                logger.warning("gio launch \(file) failed with status \(process.terminationStatus)")
            } else {
                logger.info("launched \(file)")
            }
        } catch {
            logger.warning("cannot launch \(file): \(error)")
        }
    }
}
