import DBus

/// Records the signals a connection receives for a match rule.
public final class SignalRecorder: @unchecked Sendable {
    public let buffer = EventBuffer<Message>()
    private var subscription: Subscription?

    public init(_ connection: Connection, _ rule: MatchRule) async throws {
        let buffer = self.buffer
        subscription = try await connection.subscribe(rule) { buffer.append($0) }
    }

    /// The next recorded signal with this member (and matching `predicate`), or nil at the deadline.
    public func next(_ member: String? = nil, timeout: Duration = .seconds(10),
                     where predicate: @escaping ([DBusValue]) -> Bool = { _ in true }) async -> Message? {
        await buffer.next(timeout: timeout) { message in
            (member == nil || message.member == member) && predicate((try? message.arguments()) ?? [])
        }
    }

    public func cancel() { subscription?.cancel() }
}
