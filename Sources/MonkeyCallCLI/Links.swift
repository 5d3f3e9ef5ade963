import ArgumentParser
import Localization
import MonkeyCallAPI

/// `monkeycall links`: which app opens each kind of link, and the user's choice.
struct Links: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show which app opens each link scheme (tel:, monkeycall:, ...), or choose one.",
        discussion: "The first app that declares a scheme keeps it; `monkeycall links tel org.example.Phone` gives it to another app, for good.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "A link scheme, such as tel.") var scheme: String?
    @Argument(help: "The app to open its links: an app id (sandboxed apps) or a provider name (other apps); \"\" forgets the choice.") var app: String?

    func run() async throws {
        let client = try await ServiceClient(bus)
        if let scheme {
            guard let app else { throw CLIError(tr("say which app opens %1$s: links; see `monkeycall links` for the apps", scheme)) }
            try await client.call(Telephony1.Manager.setLinkHandler, scheme, app)
            print(app.isEmpty ? tr("%1$s: links go to the next app that declares it", scheme) : tr("%1$s: links open in %2$s", scheme, app))
            return
        }
        let handlers = try await client.call(Telephony1.Manager.listLinkHandlers)
        if handlers.isEmpty { print(tr("no app has declared a link scheme yet")) }
        for (scheme, app) in handlers.sorted(by: { $0.key < $1.key }) { print("\(scheme)  \(app)") }
    }
}
