import Dispatch
import FoundationEssentials
import QueueExecutor
import ScreenText
#if canImport(Glibc)
import Glibc
import Synchronization
#endif

/// Where baresip's `ctrl_tcp` listens: `HOST:PORT`.
public struct ControlAddress: Equatable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else {
            throw Invalid(description: "the control address must be HOST:PORT, e.g. 127.0.0.1:4444, got \(text.debugDescription)")
        }
        let host = text[..<colon].trimming { $0 == "[" || $0 == "]" }
        guard !host.isEmpty else { throw Invalid(description: "the control address has no host: \(text.debugDescription)") }
        self.init(host: host, port: port)
    }

    public var description: String { "\(host):\(port)" }
}

/// A client of baresip's `ctrl_tcp`: keeps one TCP connection up, reconnecting
/// with backoff when it drops, frames commands as netstrings and hands every
/// message read to `onMessage`. All callbacks run on `queue`.
///
/// `ctrl_tcp` serves one client at a time (a new one drops the old) and replays
/// nothing after a reconnect: `onConnected` is where its user resynchronises.
public final class ControlClient: Sendable {
    public let address: ControlAddress
    let queue: DispatchQueue

    private struct State {
        var socket: Int32 = -1
        var stopped = false
        var onConnected: @Sendable () -> Void = {}
        var onDisconnected: @Sendable (_ why: String) -> Void = { _ in }
        var onMessage: @Sendable (ControlMessage) -> Void = { _ in }
    }

    /// Shared by the reading thread and the client's users.
    private let state = Mutex(State())

    public var onConnected: @Sendable () -> Void {
        get { state.withLock { $0.onConnected } }
        set { state.withLock { $0.onConnected = newValue } }
    }
    public var onDisconnected: @Sendable (_ why: String) -> Void {
        get { state.withLock { $0.onDisconnected } }
        set { state.withLock { $0.onDisconnected = newValue } }
    }
    public var onMessage: @Sendable (ControlMessage) -> Void {
        get { state.withLock { $0.onMessage } }
        set { state.withLock { $0.onMessage = newValue } }
    }
    /// Waits between attempts: doubles from the first to the last, then stays there.
    private let backoff: (first: Double, last: Double)

    public init(address: ControlAddress, queue: DispatchQueue, backoff: (first: Double, last: Double) = (0.05, 2)) {
        self.address = address
        self.queue = queue
        self.backoff = backoff
    }

    /// Starts connecting, on a thread of its own that reads for as long as the client runs.
    public func start() {
        DetachedThread.start { [self] in run() }
    }

    /// Closes the connection for good: shut down here, which ends the reading thread's `recv`;
    /// closed by that thread, the descriptor's only closer, once it no longer reads it (closed here,
    /// the thread's next `recv` could read another socket opened under the same number).
    public func stop() {
        state.withLock { state in
            state.stopped = true
            // Under the lock: the thread clears `socket` under it before closing the descriptor.
            if state.socket >= 0 { shutdown(state.socket, Int32(SHUT_RDWR)) }
        }
    }

    /// Sends `commands` in one write: baresip runs them one after the other with
    /// nothing in between (a `callfind` and the action on the call it selects).
    /// False when there is no connection.
    @discardableResult
    public func send(_ commands: [ControlCommand]) -> Bool {
        let bytes = commands.reduce(into: Data()) { $0.append($1.frame) }
        return state.withLock { state in
            let socket = state.socket
            guard socket >= 0, !state.stopped else { return false }
            return bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return false }
                    offset += written
                }
                return true
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        var wait = backoff.first
        var lastFailure = ""
        while !isStopped {
            let fd: Int32
            do {
                fd = try connectSocket()
            } catch {
                let text = "\(error)"
                // Said once per kind of failure, not at every attempt.
                if text != lastFailure { queue.async { self.onDisconnected(text) } }
                lastFailure = text
                usleep(useconds_t(wait * 1_000_000))
                wait = min(wait * 2, backoff.last)
                continue
            }
            let kept = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.socket = fd
                return true
            }
            guard kept else { close(fd); break }
            wait = backoff.first
            lastFailure = ""
            queue.async { self.onConnected() }
            let why = read(fd)
            // No one sends on it after this (`send` takes the socket under the lock); then closed.
            state.withLock { state in
                if state.socket == fd { state.socket = -1 }
            }
            close(fd)
            if isStopped { break }
            queue.async { self.onDisconnected(why) }
            lastFailure = why
        }
    }

    /// Reads frames until the connection ends; returns why it ended.
    private func read(_ fd: Int32) -> String {
        var decoder = Netstring.Decoder()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count == 0 { return "baresip closed the control connection" }
            if count < 0 { return "reading from baresip failed: \(String(cString: strerror(errno)))" }
            do {
                for frame in try decoder.feed(Data(buffer[0..<count])) {
                    do {
                        let message = try ControlMessage(json: frame)
                        queue.async { self.onMessage(message) }
                    } catch {
                        // One message we cannot read is skipped; the stream stays in step.
                        StandardStream.error.write("monkeycall-baresip: \(error)\n")
                    }
                }
            } catch {
                return "baresip's control stream is not netstrings: \(error)"
            }
        }
    }

    private func connectSocket() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &list)
        guard status == 0, let first = list else {
            throw ControlAddress.Invalid(description: "cannot resolve \(address.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var failure = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            failure = String(cString: strerror(errno))
            close(fd)
        }
        throw ControlAddress.Invalid(description: "cannot connect to baresip's ctrl_tcp at \(address): \(failure)")
    }
}
