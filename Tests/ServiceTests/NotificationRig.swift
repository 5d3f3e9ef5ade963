import DBus
import DBusTestSupport

/// What most notification tests start with: monkeycalld, the test notification server and one app.
enum NotificationRig {
    static func start(_ daemonArguments: [String] = [], app name: String = "Monkey", _ configuration: [String: DBusValue] = [:])
        async throws -> (daemon: RunningDaemon, server: NotificationServer, app: TestProvider) {
        let daemon = try await RunningDaemon(daemonArguments)
        let server = try await NotificationServer(address: daemon.bus.address)
        let app = try await TestProvider(bus: daemon.bus, name: name, configuration: configuration)
        return (daemon, server, app)
    }
}
