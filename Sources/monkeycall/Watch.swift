import ArgumentParser
import DBus
import Foundation
import MonkeyCallAPI

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print calls and providers as they come, change and go.")
    @OptionGroup var bus: BusOptions
    @Flag(help: "One JSON object a line.") var json = false

    func run() async throws {
        let client = try await ServiceClient(bus)
        let json = self.json
        let (lines, line) = AsyncStream<String>.makeStream()
        let rule = MatchRule(sender: Telephony1.busName, pathNamespace: Telephony1.rootPath)
        let subscription = try await client.connection.subscribe(rule) { message in
            guard let event = WatchEvent(message) else { return }
            line.yield(json ? event.json : event.text)
        }
        client.connection.onDisconnect { _ in line.finish() }
        // Stop when the service goes away.
        try await client.connection.followNameOwners()
        if let owner = try await client.connection.nameOwner(Telephony1.busName) {
            _ = client.connection.watchVanishing(of: owner) { line.yield(json ? #"{"event":"service-stopped"}"# : "service stopped"); line.finish() }
        }
        // On stderr, so that JSON consumers read only events: anything after this line is seen.
        FileHandle.standardError.write(Data("watching \(Telephony1.busName)\n".utf8))
        for await text in lines {
            // Written at once, not buffered: whoever reads the pipe sees each change as it happens.
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
        subscription.cancel()
    }
}

/// One change under the service's root, for people or as JSON.
struct WatchEvent {
    let event: String
    let path: String
    let fields: [String: DBusValue]

    init?(_ message: Message) {
        guard let arguments = try? message.arguments(), let member = message.member else { return nil }
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard case .objectPath(let path)? = arguments.first, case .dictionary(_, _, let interfaces)? = arguments.last else { return nil }
            self.path = path.rawValue
            event = "added"
            fields = interfaces.reduce(into: [:]) { result, entry in result.merge(entry.value.vardict ?? [:]) { $1 } }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard case .objectPath(let path)? = arguments.first else { return nil }
            self.path = path.rawValue
            event = "removed"
            fields = [:]
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard arguments.count > 1, let changed = arguments[1].vardict else { return nil }
            path = message.path?.rawValue ?? ""
            event = "changed"
            fields = changed
        default:
            return nil
        }
    }

    var text: String {
        let described = fields.keys.sorted().map { "\($0)=\(fields[$0]!.unwrappedVariant)" }.joined(separator: " ")
        return "\(event) \(path)\(described.isEmpty ? "" : " " + described)"
    }

    var json: String {
        Self.jsonObject(fields.merging(["event": .string(event), "path": .string(path)]) { $1 })
    }

    /// One JSON object, keys sorted.
    static func jsonObject(_ fields: [String: DBusValue]) -> String {
        let object = fields.mapValues(jsonValue)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func jsonValue(_ value: DBusValue) -> Any {
        switch value {
        case .byte(let v): Int(v)
        case .bool(let v): v
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): v
        case .uint64(let v): v
        case .double(let v): v
        case .string(let v): v
        case .objectPath(let v): v.rawValue
        case .signature(let v): v.rawValue
        case .unixFD(let v): Int(v.rawValue)
        case .array(_, let items): items.map(jsonValue)
        case .dictionary(_, _, let entries):
            entries.reduce(into: [String: Any]()) { result, entry in result["\(entry.key.unwrappedVariant)".trimmingCharacters(in: ["\""])] = jsonValue(entry.value) }
        case .structure(let members): members.map(jsonValue)
        case .variant(let inner): jsonValue(inner)
        }
    }
}
