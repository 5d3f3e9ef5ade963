internal import CDBus
import Glibc

/// Bodies in and out of libdbus as bytes (`WireWriter`, `WireReader`).
/// Unix fds travel beside the bytes, so bodies that carry them keep to
/// libdbus' iterators (`Marshal`), as does anything libdbus refuses here.
extension Message {
    /// The arguments read from the message's bytes; nil when the body carries unix fds.
    func wireArguments() throws(DBusError) -> [DBusValue]? {
        var bodyBytes = 0
        return try wireArguments(bodyBytes: &bodyBytes)
    }

    /// `bodyBytes` is set to the body's size on the wire, once known; a body of more than
    /// `maximumBytes` is refused before it is read. `signature`: the message's, when read already.
    func wireArguments(signature known: Signature? = nil, maximumVariantDictionaryEntries: Int = .max, maximumArrayElements: Int = .max,
                       maximumBytes: Int = .max, bodyBytes: inout Int) throws(DBusError) -> [DBusValue]? {
        let signature = (known ?? self.signature).rawValue
        guard !signature.isEmpty else { return [] }
        return try withWireBody(signature: signature, maximumVariantDictionaryEntries: maximumVariantDictionaryEntries,
                                maximumArrayElements: maximumArrayElements, maximumBytes: maximumBytes, bodyBytes: &bodyBytes) {
            (reader: inout WireReader) throws(WireFailure) in try reader.readAll()
        }
    }

    /// What `read` makes of the body (of `signature`), read off a copy of the message's bytes; nil
    /// where a value is a unix fd, which only libdbus' iterators read. `bodyBytes` and `maximumBytes`
    /// as in `wireArguments`.
    func withWireBody<R>(signature: String, maximumVariantDictionaryEntries: Int, maximumArrayElements: Int, maximumBytes: Int,
                         bodyBytes: inout Int, _ read: (inout WireReader) throws(WireFailure) -> R) throws(DBusError) -> R? {
        try withMarshalled { bytes throws(DBusError) in
            guard let layout = Layout(bytes) else { throw DBusError.invalidArgs("malformed message header") }
            guard layout.bodyStart + layout.bodyLength <= bytes.count else { throw DBusError.invalidArgs("message body is cut short") }
            bodyBytes = layout.bodyLength
            guard layout.bodyLength <= maximumBytes else {
                throw DBusError.invalidArgs("the arguments take \(layout.bodyLength) bytes; this method takes at most \(maximumBytes)")
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[layout.bodyStart..<(layout.bodyStart + layout.bodyLength)])
            var reader = WireReader(body: body, signature: signature, bigEndian: layout.bigEndian,
                                    maximumVariantDictionaryEntries: maximumVariantDictionaryEntries, maximumArrayElements: maximumArrayElements)
            do throws(WireFailure) {
                return try read(&reader)
            } catch {
                switch error {
                case .invalid(let problem): throw problem
                case .unsupported: return nil
                }
            }
        }
    }

    /// Gives the message a body written as bytes; false when that is not
    /// possible here (the message has a body already, a value is a unix fd,
    /// or libdbus refuses the bytes) and the iterators should do it instead.
    func appendWire(_ arguments: [DBusValue]) throws(DBusError) -> Bool {
        // A few plain values cost libdbus a call each, less than a second pass over the message.
        // Measured under callgrind (2026-11-28): loading a small reply again costs libdbus 16,000
        // instructions (`dbus_message_demarshal`); through the iterators a variant costs 11,500 and
        // a second plain value about 17,000 (libdbus replaces the header's SIGNATURE field after
        // each value at the top level). Sending those through the bytes too made Get and Identify
        // dearer: 32,200 instructions a reply on average, against 23,700, spliced behind the
        // header libdbus made and marshalled; replies now write their own header (`wireReply`).
        guard arguments.contains(where: \.isCollection) else { return false }
        // Asked second: reading the signature makes a String, and most replies are plain values.
        guard signature.rawValue.isEmpty else { return false }
        let signature = arguments.map(\.signatureString).joined()
        guard signature.utf8.count <= 255, let body = try Self.written(arguments) else { return false }
        return try setWireBody(signature: signature, body)
    }

    /// The message, still without a body, given `body` (of `signature`): its header spliced in
    /// front and the whole loaded by libdbus, which validates it; false where that fails.
    private func setWireBody(signature: String, _ body: [UInt8]) throws(DBusError) -> Bool {
        guard let bytes = try withMarshalled({ header in Self.splice(header: header, signature: signature, body: body) }),
              let replacement = Self.demarshal(bytes) else { return false }
        replace(with: replacement)
        return true
    }

    /// The message's header with a SIGNATURE field added, then `body`; nil for a header this cannot extend.
    private static func splice(header: UnsafeRawBufferPointer, signature: String, body: [UInt8]) -> [UInt8]? {
        guard let layout = Layout(header), !layout.bigEndian, layout.bodyLength == 0 else { return nil }
        var message = WireWriter(reservingCapacity: layout.fieldsEnd + 16 + signature.utf8.count + body.count)
        message.append(contentsOf: UnsafeRawBufferPointer(rebasing: header[0..<layout.fieldsEnd]))
        message.align(8)
        message.append(contentsOf: [HeaderField.signature.rawValue, 1, UInt8(ascii: HeaderField.signature.type), 0])
        message.putSignature(signature)
        message.patch(UInt32(message.bytes.count - Layout.fieldsStart), at: Layout.fieldsLengthOffset)
        message.align(8)
        message.append(contentsOf: body)
        message.patch(UInt32(body.count), at: Layout.bodyLengthOffset)
        // libdbus refuses to load serial 0; the copy made after loading resets it, so sending numbers it as usual.
        if layout.serial == 0 { message.patch(1, at: Layout.serialOffset) }
        return message.bytes
    }

    /// The message libdbus loads from `bytes` (validating all of it), unlocked and unnumbered.
    private static func demarshal(_ bytes: [UInt8]) -> OpaquePointer? {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let loaded = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32(buffer.count), &error) }
        }
        guard let loaded else { return nil }
        defer { dbus_message_unref(loaded) }
        return dbus_message_copy(loaded)
    }

    /// The reply to this call with `arguments` as one message written here, header and body, and
    /// loaded by libdbus in one pass; nil when the iterators are cheaper (no value, or one plain
    /// value or variant of one) or must do it (a unix fd, a header this does not write).
    ///
    /// Measured under callgrind (2026-11-28, libdbus 1.14): the iterators replace the header's
    /// SIGNATURE field after each value at the top level, and the second replacement alone costs
    /// 17,400 instructions (`_dbus_type_reader_set_basic`), so an `Identify` reply `(s, b)` cost
    /// 31,200 built by `dbus_message_new_method_return` and two appends, and 25,100 loaded from
    /// its bytes (`dbus_message_demarshal` and the copy that unnumbers it); a variant of one string
    /// (a `Get`) 16,200 through the iterators, so those stay there.
    func wireReply(_ arguments: [DBusValue]) throws(DBusError) -> Message? {
        guard let body = try Self.wireBody(arguments) else { return nil }
        return wireReply(signature: arguments.map(\.signatureString).joined(), body: body)
    }

    /// The reply to this call with `body` (of `signature`) as its arguments, loaded by libdbus
    /// from the bytes written here (which validates them); nil where that fails. Its header is the
    /// one `dbus_message_new_method_return` makes (the same fields in the same order: the
    /// destination, the reply serial, then the signature), so the bytes sent are the same.
    func wireReply(signature: String, body: [UInt8]) -> Message? {
        let sender = dbus_message_get_sender(pointer)
        let serial = dbus_message_get_serial(pointer)
        return Self.loaded(type: 2, signature: signature, body: body) { (header) in
            if let sender { header.putStringField(.destination, UnsafeRawBufferPointer(start: sender, count: strlen(sender))) }
            header.putField(.replySerial) { $0.put(serial) }
        }
    }

    /// A signal with `arguments`, and addressed to `destination` when there is one, written here,
    /// header and body, and loaded by libdbus in one pass; nil as `wireReply` (then `signal`,
    /// `append` and `setDestination` make it), and where libdbus refuses it (an invalid name).
    ///
    /// Measured under callgrind (2026-11-28, the lifecycle phase of `scripts/profile-bench`): a
    /// signal was made by `dbus_message_new_signal` (8,200 instructions, its names checked by
    /// `Names` first: 5,600), its header marshalled, its body spliced behind and the whole loaded
    /// (`appendWire`), then addressed (`dbus_message_set_destination`, 2,700), where the load alone
    /// is needed. The header's fields are in the order those calls left them.
    static func wireSignal(path: ObjectPath, interface: String, member: String, _ arguments: [DBusValue],
                           destination: String?) throws(DBusError) -> Message? {
        guard let body = try wireBody(arguments) else { return nil }
        return loaded(type: 4, signature: arguments.map(\.signatureString).joined(), body: body, fields: { (header) in
            header.putStringField(.path, path.rawValue)
            header.putStringField(.interface, interface)
            header.putStringField(.member, member)
        }, afterSignature: { (header) in
            // Where `setDestination` adds it to a signal libdbus made.
            if let destination { header.putStringField(.destination, destination) }
        })
    }

    /// A method call with `arguments`, written here as `wireSignal` writes a signal; nil as it.
    /// Sent by clients (MonkeyCallKit's reports, the CLI, the Phone app, `Properties.Get` and its
    /// two strings), where libdbus replaced the header's SIGNATURE field after each value at the
    /// top level (17,400 instructions for the second).
    static func wireMethodCall(destination: String?, path: ObjectPath, interface: String?, member: String,
                               _ arguments: [DBusValue]) throws(DBusError) -> Message? {
        guard let body = try wireBody(arguments) else { return nil }
        return loaded(type: 1, flags: 0, signature: arguments.map(\.signatureString).joined(), body: body, fields: { (header) in
            // The order `dbus_message_new_method_call` writes them in.
            header.putStringField(.path, path.rawValue)
            if let destination { header.putStringField(.destination, destination) }
            if let interface { header.putStringField(.interface, interface) }
            header.putStringField(.member, member)
        })
    }

    /// `arguments` written as a body, when that is worth it (several values, or a collection) and
    /// possible (no unix fd); nil otherwise.
    private static func wireBody(_ arguments: [DBusValue]) throws(DBusError) -> [UInt8]? {
        guard arguments.count > 1 || arguments.contains(where: \.isCollection) else { return nil }
        return try written(arguments)
    }

    /// `arguments` written as a body; nil where a value cannot be (a unix fd travels beside the bytes).
    private static func written(_ arguments: [DBusValue]) throws(DBusError) -> [UInt8]? {
        var body = WireWriter(reservingCapacity: 512)
        do {
            for argument in arguments { try body.write(argument) }
        } catch {
            switch error {
            case .invalid(let problem): throw problem
            case .unsupported: return nil
            }
        }
        return body.bytes
    }

    /// A message of `type` (1: a method call, 2: a method return, 4: a signal) written here: the header fields
    /// `fields` writes, its SIGNATURE field, what `afterSignature` writes, then `body`; loaded by
    /// libdbus, which validates all of it, and unnumbered; nil where libdbus refuses it.
    private static func loaded(type: UInt8, flags: UInt8 = 1, signature: String, body: [UInt8], fields: (inout WireWriter) -> Void,
                               afterSignature: (inout WireWriter) -> Void = { _ in }) -> Message? {
        #if _endian(little)
        guard signature.utf8.count <= 255 else { return nil }
        var message = WireWriter(reservingCapacity: Layout.fieldsStart + 160 + signature.utf8.count + body.count)
        // Byte order, the type, the flags (NO_REPLY_EXPECTED: libdbus sets it on replies and signals), version 1;
        // the body's length, patched below; serial 1, as libdbus refuses to load serial 0 (the copy
        // made after loading resets it, so sending numbers it as usual); the fields' length, patched below.
        message.append(contentsOf: [UInt8(ascii: "l"), type, flags, 1])
        message.put(UInt32(0))
        message.put(UInt32(1))
        message.put(UInt32(0))
        fields(&message)
        message.putField(.signature) { $0.putSignature(signature) }
        afterSignature(&message)
        message.patch(UInt32(message.bytes.count - Layout.fieldsStart), at: Layout.fieldsLengthOffset)
        message.align(8)
        message.append(contentsOf: body)
        message.patch(UInt32(body.count), at: Layout.bodyLengthOffset)
        return demarshal(message.bytes).map(Message.init(taking:))
        #else
        return nil
        #endif
    }

    /// Its size on the wire, in bytes (0 when libdbus cannot say). It costs a copy of the message:
    /// for the few calls of a sender not yet identified.
    var wireSize: Int { (try? withMarshalled { $0.count }) ?? 0 }

    /// The message as libdbus would send it.
    func withMarshalled<T>(_ body: (UnsafeRawBufferPointer) throws(DBusError) -> T) throws(DBusError) -> T {
        var data: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &data, &length) != 0, let data else { throw DBusError.noMemory }
        defer { dbus_free(data) }
        return try body(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    /// The codes of the header's fields (the D-Bus specification's "Header Fields") written here.
    enum HeaderField: UInt8 {
        case path = 1, interface, member
        case replySerial = 5, destination
        case signature = 8

        /// The one type its value has.
        var type: Unicode.Scalar {
            switch self {
            case .path: "o"
            case .interface, .member, .destination: "s"
            case .replySerial: "u"
            case .signature: "g"
            }
        }
    }

    /// Where things are in a marshalled message: a 16-byte fixed part (byte
    /// order, type, flags, version, body length, serial, fields length), the
    /// header fields, padding to 8, the body.
    private struct Layout {
        static let bodyLengthOffset = 4
        static let serialOffset = 8
        static let fieldsLengthOffset = 12
        static let fieldsStart = 16

        let bigEndian: Bool
        let bodyLength: Int
        let serial: UInt32
        let fieldsEnd: Int
        let bodyStart: Int

        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count >= Self.fieldsStart, bytes[0] == UInt8(ascii: "l") || bytes[0] == UInt8(ascii: "B") else { return nil }
            let bigEndian = bytes[0] == UInt8(ascii: "B")
            func number(_ offset: Int) -> UInt32 {
                let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                return bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw)
            }
            self.bigEndian = bigEndian
            bodyLength = Int(number(Self.bodyLengthOffset))
            serial = number(Self.serialOffset)
            fieldsEnd = Self.fieldsStart + Int(number(Self.fieldsLengthOffset))
            bodyStart = (fieldsEnd + 7) / 8 * 8
            guard fieldsEnd <= bytes.count else { return nil }
        }
    }
}

extension DBusValue {
    /// Whether an `a{sv}` in this value, at any depth, has more than `limit` entries.
    func hasVariantDictionary(over limit: Int) -> Bool {
        switch self {
        case .dictionary(let key, let value, let entries):
            if key.rawValue == "s", value.rawValue == "v", entries.count > limit { return true }
            return entries.contains { $0.key.hasVariantDictionary(over: limit) || $0.value.hasVariantDictionary(over: limit) }
        case .array(_, let items), .structure(let items): return items.contains { $0.hasVariantDictionary(over: limit) }
        case .variant(let inner): return inner.hasVariantDictionary(over: limit)
        default: return false
        }
    }

    fileprivate var isCollection: Bool {
        switch self {
        case .array, .dictionary, .structure: true
        case .variant(let inner): inner.isCollection
        default: false
        }
    }
}

/// Records written once as an `aa{sv}` body, for as many replies as ask for the same ones (the
/// last page of Recents, `ListedPage`): each reply splices the bytes behind its header, and only
/// libdbus' loading of the message is left to do (issue 55: writing a page of 50 entries took
/// 1.4M instructions, as many as libdbus' validation of it).
public struct EncodedRecords<Record: VarDictRecord>: Sendable {
    public let records: [Record]
    /// nil when the bytes cannot be written here (a unix fd): the iterators send `records`.
    let body: [UInt8]?

    public init(_ records: [Record]) throws(DBusError) {
        self.records = records
        body = try Self.write(records)
    }

    /// The records' `aa{sv}` body; nil as `body`.
    static func write(_ records: some Collection<Record>) throws(DBusError) -> [UInt8]? {
        var body = WireWriter(reservingCapacity: 512)
        do {
            try Record.write(records, to: &body)
        } catch {
            switch error {
            case .invalid(let problem): throw problem
            case .unsupported: return nil
            }
        }
        return body.bytes
    }
}

/// A message header's fields, as `Message.wireReply`, `wireSignal` and `wireMethodCall` write
/// them: each a code, a signature of its one type, and its value.
extension WireWriter {
    mutating func putField(_ code: Message.HeaderField, _ value: (inout WireWriter) -> Void) {
        align(8)
        append(contentsOf: [code.rawValue, 1, UInt8(ascii: code.type), 0])
        value(&self)
    }

    mutating func putStringField(_ code: Message.HeaderField, _ text: UnsafeRawBufferPointer) {
        putField(code) { writer in
            writer.put(UInt32(truncatingIfNeeded: text.count))
            writer.append(contentsOf: text)
            writer.append(contentsOf: [0])
        }
    }

    mutating func putStringField(_ code: Message.HeaderField, _ text: String) {
        var text = text
        text.withUTF8 { putStringField(code, UnsafeRawBufferPointer($0)) }
    }
}
