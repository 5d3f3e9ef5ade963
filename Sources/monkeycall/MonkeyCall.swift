import ArgumentParser

@main
struct MonkeyCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall",
        abstract: "Place, answer and watch calls through the MonkeyCall service.",
        subcommands: [
            Status.self, Calls.self, Watch.self, Dial.self, Open.self,
            Answer.self, Decline.self, End.self, Hold.self, Resume.self, Mute.self, Unmute.self, DTMF.self,
            Recents.self, CallBack.self, Favorites.self, DND.self, Block.self, Identify.self, Directory.self, Links.self,
        ]
    )
}

/// Where the service is: the session bus unless told otherwise.
struct BusOptions: ParsableArguments {
    @Option(help: "Bus address (default: the session bus, DBUS_SESSION_BUS_ADDRESS).")
    var address: String?
}
