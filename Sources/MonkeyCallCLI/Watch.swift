import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import ScreenText

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the providers and calls, then each change as it comes, until interrupted.",
        discussion: """
            Starts with the providers and calls there are now, then prints one line per change. When the \
            service stops it says so and keeps watching; when it comes back, so does the list.

            --json prints JSON Lines: one JSON object a line, for as long as it runs (a stream, not one \
            document). Each has "event" ("added", "changed", "removed", "service-stopped" or \
            "service-started"), "path", a call's UUID (as `monkeycall dial` prints it), and the \
            properties added or changed. The first lines are the current providers and calls, as \
            "added" events.
            """)
    @OptionGroup var bus: BusOptions
    @Flag(help: "JSON Lines: one JSON object a line (see above).") var json = false

    /// What the connection saw, in order.
    enum Happening: Sendable {
        case change(WatchEvent)
        case serviceStopped
        case serviceStarted
    }

    func run() async throws {
        let client = try await ServiceClient(bus)
        let (happenings, happening) = AsyncStream<Happening>.makeStream()
        let changes = try await client.connection.subscribe(MatchRule(sender: Telephony1.busName, pathNamespace: Telephony1.rootPath)) { message in
            if let event = WatchEvent(message) { happening.yield(.change(event)) }
        }
        let owners = try await client.connection.subscribe(MatchRule(sender: Connection.busName, interface: Connection.busName,
                                                                     member: "NameOwnerChanged", arg0: Telephony1.busName)) { message in
            guard let arguments = try? message.arguments(), arguments.count == 3,
                  case .string(let oldOwner) = arguments[1], case .string(let newOwner) = arguments[2] else { return }
            if !oldOwner.isEmpty { happening.yield(.serviceStopped) }
            if !newOwner.isEmpty { happening.yield(.serviceStarted) }
        }
        client.connection.onDisconnect { _ in happening.finish() }
        var view = WatchView(json: json)
        // The service sends its signals to subscribers only, so subscribe before the snapshot (and again when it restarts).
        try await client.call(Telephony1.Manager.subscribe)
        view.snapshot(try await client.managedObjects())
        // On stderr, so that JSON consumers read only events: anything after this line is seen.
        StandardStream.error.write(tr("watching %1$s", Telephony1.busName) + "\n")
        for await next in happenings {
            switch next {
            case .change(let event): view.show(event)
            case .serviceStopped: view.serviceStopped()
            case .serviceStarted:
                view.serviceStarted()
                try? await client.call(Telephony1.Manager.subscribe)
                if let objects = try? await client.managedObjects() { view.snapshot(objects) }
            }
        }
        changes.cancel()
        owners.cancel()
    }
}

/// Turns events into lines, knowing which call or provider each path is.
struct WatchView {
    let json: Bool
    /// Call paths → UUIDs, provider paths → names, as they were added.
    private var callUUIDs: [String: String] = [:]
    private var providerNames: [String: String] = [:]

    init(json: Bool) { self.json = json }

    mutating func snapshot(_ objects: [(ObjectPath, [String: [String: DBusValue]])]) {
        // Providers first, then calls, each in path order: a stable first screen.
        let ordered = objects.filter { $0.1[Telephony1.Provider.interface] != nil } + objects.filter { $0.1[Telephony1.Provider.interface] == nil }
        for (path, interfaces) in ordered where path != Telephony1.rootPath {
            show(WatchEvent(event: "added", path: path.rawValue, fields: interfaces.values.reduce(into: [:]) { $0.merge($1) { $1 } }))
        }
    }

    mutating func show(_ event: WatchEvent) {
        if event.event == "added" {
            if let uuid = event.fields[Telephony1.Call.uuid] { callUUIDs[event.path] = uuid }
            if let name = event.fields[Telephony1.Provider.name] { providerNames[event.path] = name }
        }
        let uuid = callUUIDs[event.path] ?? Self.uuid(fromCallPath: event.path)
        let provider = providerNames[event.path]
        if event.event == "removed" {
            callUUIDs[event.path] = nil
            providerNames[event.path] = nil
        }
        if json {
            var object = event.fields.mapValues(Output.jsonValue)
            object["event"] = .string(event.event)
            object["path"] = .string(event.path)
            if let uuid { object[Telephony1.Call.uuid.name] = .string(uuid) }
            return write(JSON.object(object).text)
        }
        write(Self.line(event, uuid: uuid, provider: provider))
    }

    mutating func serviceStopped() {
        callUUIDs = [:]
        providerNames = [:]
        write(json ? JSON.object(["event": "service-stopped"]).text : tr("service stopped"))
    }

    func serviceStarted() {
        write(json ? JSON.object(["event": "service-started"]).text : tr("service started"))
    }

    /// One readable line: `call UUID ringing incoming bob (Bob) via PyPhone`, `call UUID changed: State active`.
    static func line(_ event: WatchEvent, uuid: String?, provider: String?) -> String {
        let fields = event.fields
        func text(_ key: String) -> String { fields[key].map(Output.plainText) ?? "" }
        let subject: String
        if let uuid { subject = tr("call %1$s", uuid) } else if let provider { subject = tr("provider %1$s", Output.clean(provider)) }
        else if event.path == Telephony1.rootPath.rawValue { subject = tr("settings") } else { subject = event.path }
        switch event.event {
        case "added" where uuid != nil:
            let name = text(Telephony1.Call.callerName.name), handle = text(Telephony1.Call.handle.name)
            let caller = name.isEmpty || name == handle ? handle : "\(handle) (\(name))"
            let (state, app) = (text(Telephony1.Call.state.name), text(Telephony1.Call.providerName.name))
            // TRANSLATORS: %1$s is "call UUID", %2$s its state as the API names it (ringing, dialing), %3$s the caller, %4$s the app.
            return fields[Telephony1.Call.outgoing] == true ? tr("%1$s %2$s outgoing %3$s via %4$s", subject, state, caller, app)
                : tr("%1$s %2$s incoming %3$s via %4$s", subject, state, caller, app)
        case "added" where fields[Telephony1.Provider.name] != nil:
            return tr("provider %1$s registered", text(Telephony1.Provider.name.name))
        case "removed":
            return uuid != nil ? tr("%1$s ended", subject) : tr("%1$s gone", subject)
        default:
            let described = fields.keys.sorted().map { key in "\(key) \(describe(key, fields[key]!))" }.joined(separator: ", ")
            return "\(subject) \(event.event)\(described.isEmpty ? "" : ": " + described)"
        }
    }

    /// A property's value for a person: times as times, lists of objects as a count.
    private static func describe(_ key: String, _ value: DBusValue) -> String {
        switch value.unwrappedVariant {
        case .uint64(let micros) where key.hasSuffix("At"): micros == 0 ? tr("none") : Output.time(micros: micros)
        case .array("o", let paths): "\(paths.count)"
        case .string(let text) where text.isEmpty: "\"\""
        default: Output.plainText(value)
        }
    }

    /// `/…/Call/<32 hex>` → the UUID as the service writes it (lower case, with dashes).
    static func uuid(fromCallPath path: String) -> String? {
        let prefix = Telephony1.callRoot.rawValue + "/"
        guard path.hasPrefix(prefix) else { return nil }
        let hex = Array(path.dropFirst(prefix.count))
        guard hex.count == 32 else { return nil }
        var text = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { text += "-" }
            text.append(character)
        }
        return text
    }

    private func write(_ line: String) {
        // Written at once, not buffered: whoever reads the pipe sees each change as it happens.
        StandardStream.output.write(line + "\n")
    }
}

/// One change under the service's root.
struct WatchEvent: Sendable {
    let event: String
    let path: String
    let fields: [String: DBusValue]

    init(event: String, path: String, fields: [String: DBusValue]) {
        self.event = event
        self.path = path
        self.fields = fields
    }

    init?(_ message: Message) {
        guard let arguments = try? message.arguments(), let member = message.member else { return nil }
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard case .objectPath(let path)? = arguments.first, case .dictionary(_, _, let interfaces)? = arguments.last else { return nil }
            self.init(event: "added", path: path.rawValue,
                      fields: interfaces.reduce(into: [:]) { result, entry in result.merge(entry.value.vardict ?? [:]) { $1 } })
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard case .objectPath(let path)? = arguments.first else { return nil }
            self.init(event: "removed", path: path.rawValue, fields: [:])
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard arguments.count > 1, let changed = arguments[1].vardict else { return nil }
            self.init(event: "changed", path: message.path?.rawValue ?? "", fields: changed)
        default:
            return nil
        }
    }
}
