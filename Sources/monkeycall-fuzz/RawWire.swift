import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Messages libdbus will not build: written byte by byte on a socket of our own (SASL
/// EXTERNAL, `Hello`, then the call), for what the bus and the service make of them.
/// libdbus refuses invalid UTF-8 in a string when it marshals, and validates what it
/// loads; the bus validates every message it receives and drops a sender of an invalid one.
enum RawWire {
    enum Outcome: String {
        /// The bus closed our connection without answering the call: the message never reached the service.
        case droppedByBus = "dropped by the bus"
        case reply, error
        case noConnection = "could not connect"
        case noAnswer = "no answer and no close within the deadline"
    }

    /// Sends `Identify(s)` with `bytes` as its string (not UTF-8), to `destination`.
    static func sendString(bytes: [UInt8], address: String, destination: String, path: String, interface: String, member: String,
                           deadlineSeconds: Double = 10) -> (Outcome, String) {
        guard let socketPath = socketPath(of: address) else { return (.noConnection, "no socket path in \(address)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return (.noConnection, "socket: errno \(errno)") }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return (.noConnection, "socket path too long") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, byte) in pathBytes.enumerated() { raw[i] = byte }
            raw[pathBytes.count] = 0
        }
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return (.noConnection, "connect: errno \(errno)") }

        // SASL: a NUL byte, AUTH EXTERNAL with our uid in hex, then BEGIN.
        let uid = String(getuid()).utf8.map { String(format: "%02x", $0) }.joined()
        guard write(fd, Array("\0AUTH EXTERNAL \(uid)\r\n".utf8)) else { return (.noConnection, "write failed") }
        var buffer: [UInt8] = []
        guard readUntil(fd, &buffer, deadline: deadlineSeconds, { $0.contains(UInt8(ascii: "\n")) }),
              String(decoding: buffer, as: UTF8.self).hasPrefix("OK") else {
            return (.noConnection, "authentication refused: \(String(decoding: buffer, as: UTF8.self))")
        }
        buffer.removeAll()
        var out = Array("BEGIN\r\n".utf8)
        out += message(serial: 1, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                       member: "Hello", signature: "", body: [])
        // The string: length, bytes, NUL.
        var body: [UInt8] = []
        appendUInt32(&body, UInt32(bytes.count))
        body += bytes + [0]
        out += message(serial: 2, destination: destination, path: path, interface: interface, member: member, signature: "s", body: body)
        guard write(fd, out) else { return (.droppedByBus, "the bus closed the connection while we wrote") }

        // Read until the answer to serial 2, or the end of the connection.
        var offset = 0
        let start = Date()
        while Date().timeIntervalSince(start) < deadlineSeconds {
            while let (type, replySerial, errorName, length) = parseMessage(buffer, at: offset) {
                offset += length
                if replySerial == 2 {
                    return type == 3 ? (.error, errorName ?? "") : (.reply, "")
                }
            }
            switch readSome(fd, &buffer, timeoutMilliseconds: 500) {
            case .closed: return (.droppedByBus, "")
            case .data, .timeout: continue
            }
        }
        return (.noAnswer, "")
    }

    // MARK: Writing messages (little-endian)

    private static func message(serial: UInt32, destination: String, path: String, interface: String, member: String,
                                signature: String, body: [UInt8]) -> [UInt8] {
        var fields: [UInt8] = []
        func field(_ code: UInt8, _ type: Character, _ value: String) {
            while (16 + fields.count) % 8 != 0 { fields.append(0) }
            fields += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
            if type == "g" {
                fields.append(UInt8(value.utf8.count))
            } else {
                appendUInt32(&fields, UInt32(value.utf8.count))
            }
            fields += Array(value.utf8) + [0]
        }
        field(1, "o", path)
        field(2, "s", interface)
        field(3, "s", member)
        field(6, "s", destination)
        if !signature.isEmpty { field(8, "g", signature) }
        var header: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1]
        appendUInt32(&header, UInt32(body.count))
        appendUInt32(&header, serial)
        appendUInt32(&header, UInt32(fields.count))
        var message = header + fields
        while message.count % 8 != 0 { message.append(0) }
        return message + body
    }

    private static func appendUInt32(_ bytes: inout [UInt8], _ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    // MARK: Reading messages

    private static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// The type, REPLY_SERIAL and ERROR_NAME of the whole message at `offset`, and its length; nil if it is not all here.
    private static func parseMessage(_ bytes: [UInt8], at offset: Int) -> (UInt8, UInt32?, String?, Int)? {
        guard offset + 16 <= bytes.count, bytes[offset] == UInt8(ascii: "l"),
              let bodyLength = uint32(bytes, offset + 4), let fieldsLength = uint32(bytes, offset + 12) else { return nil }
        let fieldsEnd = offset + 16 + Int(fieldsLength)
        let bodyStart = offset + ((16 + Int(fieldsLength) + 7) & ~7)
        let end = bodyStart + Int(bodyLength)
        guard end <= bytes.count else { return nil }
        var replySerial: UInt32?
        var errorName: String?
        var at = offset + 16
        while at < fieldsEnd {
            at = offset + ((at - offset + 7) & ~7)
            guard at + 4 <= fieldsEnd else { break }
            let code = bytes[at], type = bytes[at + 2]
            at += 4
            switch type {
            case UInt8(ascii: "u"):
                at = offset + ((at - offset + 3) & ~3)
                if code == 5 { replySerial = uint32(bytes, at) }
                at += 4
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                at = offset + ((at - offset + 3) & ~3)
                let length = Int(uint32(bytes, at) ?? 0)
                if code == 4, at + 4 + length <= bytes.count { errorName = String(decoding: bytes[(at + 4)..<(at + 4 + length)], as: UTF8.self) }
                at += 4 + length + 1
            case UInt8(ascii: "g"):
                at += 1 + Int(bytes[at]) + 1
            default:
                at = fieldsEnd
            }
        }
        return (bytes[offset + 1], replySerial, errorName, end - offset)
    }

    // MARK: The socket

    private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private enum ReadResult { case data, closed, timeout }

    private static func readSome(_ fd: Int32, _ buffer: inout [UInt8], timeoutMilliseconds: Int32) -> ReadResult {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        guard ready > 0 else { return .timeout }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { return count < 0 && errno == EINTR ? .timeout : .closed }
        buffer += chunk[0..<count]
        return .data
    }

    private static func readUntil(_ fd: Int32, _ buffer: inout [UInt8], deadline: Double, _ done: ([UInt8]) -> Bool) -> Bool {
        let start = Date()
        while !done(buffer) {
            guard Date().timeIntervalSince(start) < deadline else { return false }
            if readSome(fd, &buffer, timeoutMilliseconds: 500) == .closed { return false }
        }
        return true
    }

    /// `/path` of a `unix:path=/path,guid=…` address.
    static func socketPath(of address: String) -> String? {
        for part in address.split(separator: ",") {
            if let range = part.range(of: "unix:path=") { return String(part[range.upperBound...]) }
            if part.hasPrefix("path=") { return String(part.dropFirst(5)) }
        }
        return nil
    }
}
