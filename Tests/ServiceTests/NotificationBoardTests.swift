import DBus
import DBusTestSupport
import DesktopNotifications
import Foundation
@testable import TelephonyService
import Testing

/// The board's memory of what is on screen stays bounded when no server ever says a notification
/// expired (no server at all, or one that does not send NotificationClosed): found by a soak, where
/// every call's "Call ended" stayed on the board, 5 KB a call.
@Suite("Notification board: bounded without a server")
struct NotificationBoardTests {
    /// A notifier that only counts.
    final class CountingNotifier: Notifier, @unchecked Sendable {
        private let lock = NSLock()
        private var posts = 0
        var posted: Int { lock.withLock { posts } }
        func post(_ notification: DesktopNotification, onEvent: @escaping @Sendable (NotificationEvent) -> Void) { lock.withLock { posts += 1 } }
        func withdraw(_ key: String) {}
        func serverVanished() {}
        func serverAppeared() {}
    }

    final class Poster {}

    @Test("notifications the server expires are forgotten past the last 64; those that stay until withdrawn are kept")
    @TelephonyActor
    func transientForgotten() {
        let notifier = CountingNotifier()
        let board = NotificationBoard(notifier: notifier)
        let poster = Poster()
        let (count, residentKept, newestKept) = {
            var resident = DesktopNotification(key: "ringing", appName: "App", summary: "Incoming call", body: "alice")
            resident.expiry = .never
            board.post(resident, by: poster) { _ in }
            for index in 0..<1000 {
                var ended = DesktopNotification(key: "call-\(index)", appName: "App", summary: "Call ended · 0:0\(index % 10)", body: "caller \(index)")
                ended.expiry = .seconds(10)
                board.post(ended, by: poster) { _ in }
            }
            return (board.postedCount, board.shows("ringing", by: poster), board.shows("call-999", by: poster))
        }()
        #expect(count == NotificationBoard.transientKept + 1)
        #expect(residentKept && newestKept)
        #expect(notifier.posted == 1001)
    }
}
