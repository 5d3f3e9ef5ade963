internal import CDBus
import Glibc
import Synchronization

/// A D-Bus message: method call, reply, error or signal. Owns one reference
/// to the libdbus message.
public final class Message: Sendable {
    /// The libdbus message, as its address: replaced only while the message is being built
    /// (`appendWire`), before anyone else sees it.
    private let address: Atomic<Int>
    var pointer: OpaquePointer { OpaquePointer(bitPattern: address.load(ordering: .acquiring))! }

    init(taking pointer: OpaquePointer) {
        address = Atomic(Int(bitPattern: pointer))
    }

    /// Takes `other` in place of the message this held.
    func replace(with other: OpaquePointer) {
        let old = address.exchange(Int(bitPattern: other), ordering: .acquiringAndReleasing)
        dbus_message_unref(OpaquePointer(bitPattern: old)!)
    }

    deinit { dbus_message_unref(pointer) }

    // MARK: Creating

    public static func methodCall(destination: String?, path: ObjectPath, interface: String?, member: String) throws(DBusError) -> Message {
        if let destination { try Names.validateBusName(destination) }
        if let interface { try Names.validateInterface(interface) }
        try Names.validateMember(member)
        guard let pointer = dbus_message_new_method_call(destination, path.rawValue, interface, member) else { throw DBusError.noMemory }
        return Message(taking: pointer)
    }

    /// A method call with its arguments: written as bytes and loaded by libdbus once where it has
    /// several values or a collection (`wireMethodCall`), as a client's calls mostly have.
    static func methodCall(destination: String?, path: ObjectPath, interface: String?, member: String,
                           _ arguments: [DBusValue]) throws(DBusError) -> Message {
        if let message = try wireMethodCall(destination: destination, path: path, interface: interface, member: member, arguments) {
            return message
        }
        let message = try methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(arguments)
        return message
    }

    public static func signal(path: ObjectPath, interface: String, member: String) throws(DBusError) -> Message {
        try Names.validateInterface(interface)
        try Names.validateMember(member)
        guard let pointer = dbus_message_new_signal(path.rawValue, interface, member) else { throw DBusError.noMemory }
        return Message(taking: pointer)
    }

    /// A signal with its arguments, addressed to `destination` when there is one: written as bytes
    /// and loaded by libdbus once where it has several values or a collection (`wireSignal`).
    static func signal(path: ObjectPath, interface: String, member: String, _ arguments: [DBusValue],
                       destination: String?) throws(DBusError) -> Message {
        if let message = try wireSignal(path: path, interface: interface, member: member, arguments, destination: destination) { return message }
        let message = try signal(path: path, interface: interface, member: member)
        try message.append(arguments)
        if let destination { try message.setDestination(destination) }
        return message
    }

    /// The reply to this method call.
    public func makeReply(_ arguments: [DBusValue] = []) throws(DBusError) -> Message {
        // Several values, or collections: written as bytes (see `wireReply`), else the iterators.
        if let reply = try wireReply(arguments) { return reply }
        return try iteratorReply(arguments)
    }

    /// A reply whose one argument is the records, an `aa{sv}` written straight to the wire.
    func makeReply<R: VarDictRecord>(records encoded: EncodedRecords<R>) throws(DBusError) -> Message {
        if let body = encoded.body, let reply = wireReply(signature: "aa{sv}", body: body) { return reply }
        return try iteratorReply([encoded.records.dbusValue])
    }

    /// The reply libdbus makes (`dbus_message_new_method_return`), its arguments appended through its iterators.
    func iteratorReply(_ arguments: [DBusValue]) throws(DBusError) -> Message {
        guard let pointer = dbus_message_new_method_return(self.pointer) else { throw DBusError.noMemory }
        let reply = Message(taking: pointer)
        if !arguments.isEmpty { try reply.appendWithIterators(arguments) }
        return reply
    }

    /// An error reply to this method call.
    public func makeErrorReply(_ error: DBusError) -> Message? {
        // libdbus aborts on an invalid error name: fall back to Failed rather than crash.
        let name = (try? Names.validateErrorName(error.name)) != nil ? error.name : DBusError.Name.failed
        let text = error.message.replacing("\0", with: "")
        return dbus_message_new_error(pointer, name, text).map(Message.init(taking:))
    }

    // MARK: Header

    public var type: MessageType { MessageType(rawValue: dbus_message_get_type(pointer)) ?? .invalid }
    public var path: ObjectPath? { dbus_message_get_path(pointer).map { ObjectPath(unchecked: String(cString: $0)) } }
    /// Whether `name` is the sender (compared without making a String of it); a message without
    /// a sender is sent by "", as `sender ?? ""` says.
    func isSent(by name: String) -> Bool {
        guard let raw = dbus_message_get_sender(pointer) else { return name.isEmpty }
        return name.equals(cString: raw, length: strlen(raw))
    }

    /// The path, as `last` when it is the same (no String made).
    func path(reusing last: ObjectPath?) -> ObjectPath? {
        guard let raw = dbus_message_get_path(pointer) else { return nil }
        if let last, last.rawValue.equals(cString: raw, length: strlen(raw)) { return last }
        return ObjectPath(unchecked: String(cString: raw))
    }
    public var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(pointer).map { String(cString: $0) } }
    public var signature: Signature { Signature(unchecked: dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "") }
    public var serial: UInt32 { dbus_message_get_serial(pointer) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(pointer) }
    public var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }

    /// A copy that may be changed and sent on its own (libdbus copies the marshalled body as
    /// bytes: cheaper than marshalling the values again).
    func copy() throws(DBusError) -> Message {
        guard let pointer = dbus_message_copy(pointer) else { throw DBusError.noMemory }
        return Message(taking: pointer)
    }

    public func setDestination(_ destination: String) throws(DBusError) {
        try Names.validateBusName(destination)
        guard dbus_message_set_destination(pointer, destination) != 0 else { throw DBusError.noMemory }
    }

    public func setNoReply(_ noReply: Bool) { dbus_message_set_no_reply(pointer, noReply ? 1 : 0) }

    /// Lets the bus start the destination by D-Bus activation (true by default in libdbus).
    public func setAutoStart(_ autoStart: Bool) { dbus_message_set_auto_start(pointer, autoStart ? 1 : 0) }

    // MARK: Body

    /// Appends arguments to the body.
    public func append(_ arguments: [DBusValue]) throws(DBusError) {
        guard !arguments.isEmpty else { return }
        if try appendWire(arguments) { return }
        try appendWithIterators(arguments)
    }

    func appendWithIterators(_ arguments: [DBusValue]) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iter)
        for argument in arguments { try Marshal.append(argument, to: &iter) }
    }

    /// Reads the whole body.
    public func arguments() throws(DBusError) -> [DBusValue] {
        if let values = try wireArguments() { return values }
        return try argumentsWithIterators()
    }

    /// The arguments of an incoming call, with every `a{sv}` of at most `maximumVariantDictionaryEntries`
    /// and every array of at most `maximumArrayElements`, refused as they are read.
    /// `signature`: the message's, when read already.
    func arguments(signature: Signature? = nil, maximumVariantDictionaryEntries: Int, maximumArrayElements: Int = .max, maximumBytes: Int = .max,
                   bodyBytes: inout Int) throws(DBusError) -> [DBusValue] {
        if let values = try wireArguments(signature: signature, maximumVariantDictionaryEntries: maximumVariantDictionaryEntries,
                                          maximumArrayElements: maximumArrayElements, maximumBytes: maximumBytes, bodyBytes: &bodyBytes) { return values }
        return try argumentsWithUnixFDs(maximumVariantDictionaryEntries: maximumVariantDictionaryEntries)
    }

    /// A body with unix fds (rare), which only the iterators read: its `a{sv}`s bounded after the fact.
    func argumentsWithUnixFDs(maximumVariantDictionaryEntries: Int) throws(DBusError) -> [DBusValue] {
        let values = try argumentsWithIterators()
        if values.contains(where: { $0.hasVariantDictionary(over: maximumVariantDictionaryEntries) }) {
            throw DBusError.invalidArgs("a dictionary (a{sv}) of more than \(maximumVariantDictionaryEntries) entries: no argument of this interface has that many keys")
        }
        return values
    }

    func argumentsWithIterators() throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(try Marshal.read(&iter))
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    /// The error this message carries, when it is an error reply.
    public var error: DBusError? {
        guard type == .error else { return nil }
        let text: String
        if case .string(let message)? = try? arguments().first { text = message } else { text = "" }
        return DBusError(name: errorName ?? DBusError.Name.failed, message: text)
    }
}

extension DBusError {
    static let noMemory = DBusError(name: Name.noMemory, message: "out of memory")
}
