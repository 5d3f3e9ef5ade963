import DBus
import Dispatch
import FoundationEssentials
import Logging
import MonkeyCallAPI
import QueueExecutor
import TelephonyCore

/// CallKit's in-call app button: brings a call's app forward, and tells the provider
/// (`DidRequestShowApp`) so that it can show that call.
/// - A sandboxed app gets `org.freedesktop.Application.Activate` on its app id, a bus name only it
///   may own; when nothing owns it, its store runs it (`flatpak run APPID`, `snap run NAME`). Never
///   a desktop file: the one in `~/.local/share/applications` may be written by any app with
///   home access.
/// - A host app's desktop file: `Activate` for a D-Bus-activatable one (`DBusActivatable=true`),
///   else it is launched (`gio launch`), which for a running single-instance app raises its window.
/// Programs start outside the daemon (`ProgramLauncher`). Desktop files are read and programs
/// started off the service's queue.
@TelephonyActor
final class AppActivation {
    nonisolated static let applicationInterface = "org.freedesktop.Application"
    /// Where desktop files are looked up and programs started: off the service queue, and a
    /// serial queue rather than a global one (see `SerialTaskExecutor` for why that matters when idle).
    private nonisolated static let desktopFiles = DispatchQueue(label: "org.monkeycall.activation", qos: .utility)

    private let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    /// The user asked for `call`'s app.
    func show(_ call: Call) {
        guard let provider = context.switchboard.provider(call.provider) else { return }
        do {
            try context.connection.emit(Telephony1.Provider.didRequestShowApp, path: Telephony1.providerPath(provider.id.rawValue),
                                        call.uuid.apiString, destination: provider.owner)
        } catch {
            context.logger.error("cannot send \(Telephony1.Provider.didRequestShowApp.name) to provider \(provider.id): \(error)")
        }
        if provider.isSandboxed {
            showSandboxedApp(provider.appID)
            return
        }
        let entry = provider.configuration.desktopEntry
        guard !entry.isEmpty else { return }
        let id = entry.hasSuffix(".desktop") ? String(entry.dropLast(".desktop".count)) : entry
        let logger = context.logger
        Self.desktopFiles.async { [self] in
            guard let file = Self.desktopFile(id) else {
                logger.warning("cannot bring \(provider.name) forward: no desktop file \(id).desktop in the applications folders")
                return
            }
            if Self.isDBusActivatable(file) {
                activate(id) { _ in }
            } else {
                ProgramLauncher.start(["gio", "launch", file], as: id, logger: logger)
            }
        }
    }

    /// `Activate` on the app id; when that fails (nothing owns the name, nor can the bus start it),
    /// the app's store runs it.
    private func showSandboxedApp(_ appID: String) {
        let logger = context.logger
        activate(appID) { activated in
            guard !activated else { return }
            let command = appID.hasPrefix("snap.") ? ["snap", "run", String(appID.dropFirst(5))] : ["flatpak", "run", appID]
            Self.desktopFiles.async { ProgramLauncher.start(command, as: appID, logger: logger) }
        }
    }

    /// Calls `org.freedesktop.Application.Activate` on the bus name `id`; `done` says whether it answered.
    private nonisolated func activate(_ id: String, done: @escaping @Sendable (Bool) -> Void) {
        let connection = context.connection, logger = context.logger
        Task(executorPreference: SerialTaskExecutor.shared) {
            do {
                _ = try await connection.call(destination: id, path: try Self.objectPath(of: id), interface: Self.applicationInterface,
                                              member: "Activate", [.vardict([:])], timeout: .seconds(5))
                done(true)
            } catch {
                logger.info("cannot activate \(id) over the bus: \(error)")
                done(false)
            }
        }
    }

    /// The desktop file of `id` in `$XDG_DATA_HOME/applications`, then each of `$XDG_DATA_DIRS`.
    nonisolated static func desktopFile(_ id: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.local/share"
        let dirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return ([home] + dirs).map { "\($0)/applications/\(id).desktop" }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// `DBusActivatable=true` in the `[Desktop Entry]` group.
    nonisolated static func isDBusActivatable(_ file: String) -> Bool {
        DesktopEntry.value("DBusActivatable", inFile: file) == "true"
    }

    /// The Desktop Entry spec's object path for an app id: "/" then dots as slashes, dashes as underscores.
    nonisolated static func objectPath(of id: String) throws -> ObjectPath {
        try ObjectPath("/" + id.replacing(".", with: "/").replacing("-", with: "_"))
    }

}

extension ServiceContext {
    /// Runs one of the Phone app's actions (`call`, `show-call`, `search`), starting it by D-Bus
    /// activation; `otherwise` runs, on the actor, when it could not (the Phone app is not
    /// installed, or failed).
    func askPhone(_ action: String, _ argument: String, platformData: [String: DBusValue] = [:],
                  otherwise: (@Sendable @TelephonyActor () -> Void)? = nil) {
        let logger = logger
        connection.call(Desktop.Application.activateAction, destination: PhoneApp.appID, path: PhoneApp.objectPath, action,
                        [DBusValue.string(argument)], platformData, timeout: .seconds(30)) { result in
            guard case .failure(let error) = result else { return }
            logger.warning("cannot open the Phone app (\(PhoneApp.appID), app.\(action)): \(error)")
            if let otherwise { TelephonyActor.enter(otherwise) }
        }
    }
}
