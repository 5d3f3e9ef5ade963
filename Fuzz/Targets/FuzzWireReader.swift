// libFuzzer entry: the D-Bus value decoders. The input is a whole message as it
// comes off a socket; libdbus checks it (dbus_message_demarshal, as for a
// message from the bus), then the fast byte reader (WireReader) and libdbus'
// iterators (Marshal) must both read it, to the same values. Built into the
// DBus module by scripts/fuzz; not part of the package.
internal import CDBus

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
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
