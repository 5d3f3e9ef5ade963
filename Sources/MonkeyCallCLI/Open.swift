import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI

/// The handler of `monkeycall:` links (see desktop/): the link becomes a call.
struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the call a monkeycall:, tel:, sip: or callto: link names, once the user presses Call on the notification that asks; print the UUID it will have.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The link, e.g. monkeycall://alice or tel:+1-555-0123.") var url: String

    func run() async throws {
        // The connection itself: the error's D-Bus name says what to tell the user.
        let connection = try await ServiceClient(bus).connection
        do {
            let uuid = try await connection.call(Telephony1.Manager.openURL, destination: Telephony1.busName, path: Telephony1.rootPath, url)
            print(Output.clean(uuid))
        } catch let error as DBusError where error.name == APIError.noProvider.rawValue {
            // In the words of apps and links (the service's message speaks to developers, of URLSchemes).
            let scheme = Output.clean(String(url.prefix { $0 != ":" }).lowercased())
            let message = "no app for \(scheme): links is running"
            // Clicked links have no terminal: say it on the desktop too, when a notification server is there.
            await notify(summary: "No app can make this call", body: message + ".", on: connection)
            // TRANSLATORS: %1$s is the service's (English) reason.
            throw CLIError(tr("%1$s; start the app that handles these links and try again", message))
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }

    private func notify(summary: String, body: String, on connection: Connection) async {
        let hints = DBusValue.vardict(["category": .string("call"), "urgency": .byte(1)])
        _ = try? await connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                       interface: "org.freedesktop.Notifications", member: "Notify",
                                       [.string("MonkeyCall"), .uint32(0), .string("call-start"), .string(summary), .string(body),
                                        .array(element: "s", []), hints, .int32(-1)], timeout: .seconds(2))
    }
}
