import DBus
import DBusTestSupport
import Foundation

/// Writes the desktop file `id` (`org.example.App.desktop`) into `folder`, making the folder: an
/// application called `name` that runs `exec`, with `more` lines (`Key=value\n`) after them.
func writeDesktopFile(_ id: String, in folder: URL, name: String, exec: String, more: String = "") throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try "[Desktop Entry]\nType=Application\nName=\(name)\nExec=\(exec)\n\(more)"
        .write(to: folder.appendingPathComponent(id), atomically: true, encoding: .utf8)
}

/// A running D-Bus-activatable app: owns its app id's name and records each
/// `org.freedesktop.Application.Activate` at its object path.
final class ActivatableApp: Sendable {
    let connection: Connection
    let objects: ObjectServer
    /// Each `Activate`'s arguments.
    let activated = EventBuffer<[DBusValue]>()

    init(_ appID: String, bus address: String) async throws {
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        let activated = self.activated
        try objects.export(ObjectPath("/" + appID.replacingOccurrences(of: ".", with: "/")), [Interface("org.freedesktop.Application") {
            Method("Activate", in: ["platform_data": "a{sv}"]) { call in
                activated.append((try? call.message.arguments()) ?? [])
                return .empty
            }
        }])
        let reply = try await connection.requestName(appID)
        guard reply == .primaryOwner else { throw TestSupportError("\(appID) is already owned: \(reply)") }
    }
}
