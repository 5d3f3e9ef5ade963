/// Carries a value across to the one queue (or thread) that uses it: the project's one wrapper
/// for what the compiler cannot check (C objects, closures and delegates kept on one queue, and
/// the state a connection and its object server keep there).
public struct UncheckedSendable<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
}
