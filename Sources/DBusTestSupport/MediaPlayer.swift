import DBus
import Foundation

/// A media player (MPRIS, `org.mpris.MediaPlayer2.NAME`) for tests, on its
/// own connection: records every call to its player interface, with the
/// caller, and leaves the bus when its connection closes.
public final class MediaPlayer: @unchecked Sendable {
    public struct Received: Sendable, Equatable {
        public let member: String
        /// The caller's unique name.
        public let sender: String
    }

    public static let path: ObjectPath = "/org/mpris/MediaPlayer2"
    public static let player = "org.mpris.MediaPlayer2.Player"

    public let name: String
    public let connection: Connection
    let objects: ObjectServer
    /// Every Play, Pause, PlayPause and Stop, in order.
    public let received = EventBuffer<Received>()
    // On the connection's queue.
    private var status: String

    /// `status`: "Playing", "Paused" or "Stopped".
    public init(address: String, name: String, status: String) async throws {
        self.name = "org.mpris.MediaPlayer2." + name
        self.status = status
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        try objects.export(Self.path, [rootInterface(), playerInterface()])
        guard try await connection.requestName(self.name) == .primaryOwner else { throw TestSupportError("\(self.name) is taken") }
    }

    public var playbackStatus: String { connection.onQueueSync { status } }

    /// The player quits: it leaves the bus.
    public func quit() { connection.close() }

    /// Released: it leaves the bus rather than stay there answering for nobody.
    deinit { connection.close() }

    private func rootInterface() -> Interface {
        Interface("org.mpris.MediaPlayer2") {
            Property("Identity", "s") { [name] in .string(name) }
            Property("CanQuit", "b") { .bool(false) }
        }
    }

    private func playerInterface() -> Interface {
        // What each control does to the status; the change is announced as MPRIS players do.
        let controls: [(String, (String) -> String)] = [
            ("Play", { _ in "Playing" }),
            ("Pause", { $0 == "Playing" ? "Paused" : $0 }),
            ("PlayPause", { $0 == "Playing" ? "Paused" : "Playing" }),
            ("Stop", { _ in "Stopped" }),
        ]
        return Interface(Self.player) {
            controls.map { member, next in
                Member.method(Method(member) { [weak self] call in
                    guard let self else { throw DBusError.standInReleased }
                    received.append(Received(member: member, sender: call.sender))
                    change(to: next(status))
                    return .empty
                })
            }
            Property("PlaybackStatus", "s") { [weak self] in .string(self?.status ?? "Stopped") }
        }
    }

    private func change(to newStatus: String) {
        guard newStatus != status else { return }
        status = newStatus
        objects.exportedObject(at: Self.path)?.propertiesChanged(["PlaybackStatus"], on: Self.player)
    }
}
