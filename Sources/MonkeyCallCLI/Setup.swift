import ArgumentParser
import DBus
import Localization
import MonkeyCallAPI
import MonkeyCallClient

/// `monkeycall setup gnome-shell`: turns on MonkeyCall's GNOME Shell extension for the user (the
/// lock screen's call card, the top bar's call), as the Phone app offers once. System-wide
/// extensions are off until a user turns them on: this is that consent, asked for by name.
struct Setup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Set up MonkeyCall in the desktop.", subcommands: [GnomeShell.self])

    struct GnomeShell: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gnome-shell",
            abstract: "Turn on MonkeyCall's GNOME Shell extension: answer calls from the lock screen, and the call in the top bar.")
        @OptionGroup var bus: BusOptions

        func run() async throws {
            let connection: Connection
            do {
                connection = try bus.address.map { try Connection(address: $0) } ?? Connection.sessionBus()
            } catch let error as DBusError {
                throw CLIError(tr("cannot reach the session bus: %1$s", error.message))
            }
            defer { connection.close() }
            let uuid = Desktop.ShellExtensions.monkeyCall
            // Off in any state (even in error, or out of date): the user asked for it by name.
            switch try await ShellExtension.status(on: connection) {
            case .noShell:
                throw CLIError(tr("GNOME Shell is not running in this session: there is nothing to set up"))
            case .notInstalled:
                throw CLIError(tr("MonkeyCall's GNOME Shell extension (%1$s) is not installed; scripts/install and the package install it", uuid))
            case .on:
                print(tr("MonkeyCall's GNOME Shell extension was already on"))
                return
            case .off:
                break
            }
            guard try await ShellExtension.enable(on: connection) else {
                throw CLIError(tr("GNOME Shell did not turn on MonkeyCall's extension (%1$s)", uuid))
            }
            print(tr("MonkeyCall's GNOME Shell extension is on: calls ring on the lock screen, where you can answer them, and a call in progress shows in the top bar"))
        }
    }
}
