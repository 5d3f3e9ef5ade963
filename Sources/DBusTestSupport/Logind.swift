import DBus
import ProcessSpawn
import Foundation
import Glibc

/// A stand-in for logind (`org.freedesktop.login1`) on a bus that plays the
/// system bus: records each `Manager.Inhibit` and, like logind, hands out one
/// end of a pipe whose other end tells when the inhibitor is released (the
/// holder closed its descriptor).
public final class Logind: @unchecked Sendable {
    /// One `Inhibit` call and the lock it handed out.
    public final class Inhibition: @unchecked Sendable {
        public let what: String
        public let who: String
        public let why: String
        public let mode: String
        /// Our end of the pipe: it reads end-of-file once every copy of the holder's end is closed.
        private let watchedEnd: Int32

        /// `arguments`: the `Inhibit` call's, as it sent them (what, who, why, mode).
        init(_ arguments: (String, String, String, String), watchedEnd: Int32) {
            (what, who, why, mode) = arguments
            self.watchedEnd = watchedEnd
        }

        deinit { close(watchedEnd) }

        /// Whether the holder has released it, right now.
        public var isReleased: Bool { hungUp(waitingMilliseconds: 0) }

        /// Waits up to `timeout` for the holder to release it.
        public func released(timeout: Duration = .seconds(10)) async -> Bool {
            let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            return await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: self.hungUp(waitingMilliseconds: milliseconds)) }
            }
        }

        private func hungUp(waitingMilliseconds: Int32) -> Bool {
            var entry = pollfd(fd: watchedEnd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, waitingMilliseconds) > 0 else { return false }
            // Nobody writes to the pipe: readiness means every writer is gone.
            return entry.revents & Int16(POLLHUP | POLLIN) != 0
        }
    }

    public static let name = "org.freedesktop.login1"
    public static let path: ObjectPath = "/org/freedesktop/login1"
    public static let manager = "org.freedesktop.login1.Manager"

    public let connection: Connection
    let objects: ObjectServer
    public let inhibitions = EventBuffer<Inhibition>()

    /// Released: it leaves the bus rather than stay there answering for nobody.
    deinit { connection.close() }

    public init(address: String) async throws {
        connection = try Connection(address: address)
        objects = ObjectServer(connection: connection)
        try objects.export(Self.path, [managerInterface()])
        guard try await connection.requestName(Self.name) == .primaryOwner else { throw TestSupportError("\(Self.name) is taken") }
    }

    private func managerInterface() -> Interface {
        Interface(Self.manager) {
            Method("Inhibit", in: ["what": "s", "who": "s", "why": "s", "mode": "s"], out: ["pipe_fd": "h"]) { [weak self] call in
                guard let self else { throw DBusError.standInReleased }
                let arguments = try call.decode(String.self, String.self, String.self, String.self)
                // Close-on-exec: not inherited by processes the test spawns, which would keep the lock alive.
                guard case .success(let pipes) = Spawn.pipes(1), let pipe = pipes.first else { throw DBusError.failed("pipe: errno \(errno)") }
                inhibitions.append(Inhibition(arguments, watchedEnd: pipe.read))
                // The reply carries a copy; ours closes when the value is released, after sending.
                return .values([.unixFD(UnixFD(owning: pipe.write))])
            }
        }
    }
}
