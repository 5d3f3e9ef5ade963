// libFuzzer entry: the D-Bus value decoders. Linked by scripts/fuzz with the DBus
// module and what it depends on; not part of the package. Two kinds of input:
// - a whole message as it comes off a socket (first byte 'l' or 'B'): libdbus
//   checks it (dbus_message_demarshal, as for a message from the bus), then the
//   fast byte reader (WireReader) and libdbus' iterators (Marshal) must both
//   read it, to the same values;
// - first byte with the high bit set: bit 0 the byte order, the next byte a
//   signature's length, the signature, then a body of any bytes. WireReader
//   alone meets bytes no one checked: it must answer with values or an error,
//   never trap or read out of bounds.

@testable import DBus
internal import CDBus

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    if let first = input.first, first & 0x80 != 0 {
        readBody(Array(input.dropFirst()), bigEndian: first & 1 != 0)
        return 0
    }
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard let raw = data.withMemoryRebound(to: CChar.self, capacity: size, { dbus_message_demarshal($0, Int32(clamping: size), &error) }) else { return 0 }
    let message = Message(taking: raw)
    let fast = try? message.wireArguments()
    let slow = try? message.argumentsWithIterators()
    if let fast, let slow {
        precondition(fast == slow, "WireReader and Marshal disagree")
    }
    return 0
}

private func readBody(_ bytes: [UInt8], bigEndian: Bool) {
    guard let length = bytes.first.map(Int.init), bytes.count > length else { return }
    let signature = String(decoding: bytes[1..<(1 + length)], as: UTF8.self)
    guard !signature.isEmpty, dbus_signature_validate(signature, nil) != 0 else { return }
    // A copy: the body starts 8-aligned in a message, as here.
    let body = Array(bytes[(length + 1)...])
    // Values or an error, never a crash: what is in them (UTF-8, object paths, signatures
    // inside the body) libdbus checks before WireReader meets a body in the service.
    _ = body.withUnsafeBytes { raw -> [DBusValue]? in
        var reader = WireReader(body: raw, signature: signature, bigEndian: bigEndian)
        return try? reader.readAll()
    }
}
