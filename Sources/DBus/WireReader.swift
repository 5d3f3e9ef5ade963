/// Reads a message body in the D-Bus wire format into `DBusValue`s, driven by
/// the body's signature. The counterpart of `WireWriter`, for the same reason:
/// one pass over bytes libdbus has already validated instead of an iterator
/// call per value. Every read is still bounds-checked, so a body that is not
/// what its signature says is an error, never a crash.
struct WireReader {
    private let body: UnsafeRawBufferPointer
    private let signature: [UInt8]
    private let bigEndian: Bool
    private var offset = 0
    /// Where the body's next value begins in the signature (`next`).
    private var nextType = 0
    /// `a{sv}` dictionaries with more entries are refused as they are read (InvalidArgs), before the
    /// rest is decoded: a 65 MB one of 2.7 M keys once took 670 MiB to hold as values.
    private var maximumVariantDictionaryEntries = Int.max
    /// Arrays with more elements are refused the same way; one of fixed-size elements (numbers,
    /// bytes) before a single one is read, from its length.
    private var maximumArrayElements = Int.max

    init(body: UnsafeRawBufferPointer, signature: String, bigEndian: Bool, maximumVariantDictionaryEntries: Int = .max,
         maximumArrayElements: Int = .max) {
        self.body = body
        self.signature = Array(signature.utf8)
        self.bigEndian = bigEndian
        self.maximumVariantDictionaryEntries = maximumVariantDictionaryEntries
        self.maximumArrayElements = maximumArrayElements
    }

    private func tooManyElements() -> WireFailure {
        .invalid(DBusError.invalidArgs("an array of more than \(maximumArrayElements) elements: no argument of this interface takes that many at once (send it in batches)"))
    }

    /// Every value of the body, in order.
    mutating func readAll() throws(WireFailure) -> [DBusValue] {
        var values: [DBusValue] = []
        // At most one value a type code: grown once, not for each value.
        values.reserveCapacity(signature.count)
        while let value = try next() {
            values.append(value)
        }
        return values
    }

    /// The body's next value (a complete type of the signature); nil past the last.
    mutating func next() throws(WireFailure) -> DBusValue? {
        guard nextType < signature.count else { return nil }
        var index = nextType
        defer { nextType = index }
        return try read(at: &index)
    }

    /// Reads the complete type starting at `signature[index]` and moves `index` past it.
    private mutating func read(at index: inout Int) throws(WireFailure) -> DBusValue {
        let code = signature[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte(try number(UInt8.self))
        case UInt8(ascii: "b"): return .bool(try number(UInt32.self) != 0)
        case UInt8(ascii: "n"): return .int16(try number(Int16.self))
        case UInt8(ascii: "q"): return .uint16(try number(UInt16.self))
        case UInt8(ascii: "i"): return .int32(try number(Int32.self))
        case UInt8(ascii: "u"): return .uint32(try number(UInt32.self))
        case UInt8(ascii: "x"): return .int64(try number(Int64.self))
        case UInt8(ascii: "t"): return .uint64(try number(UInt64.self))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: try number(UInt64.self)))
        case UInt8(ascii: "s"): return .string(try string())
        case UInt8(ascii: "o"): return .objectPath(ObjectPath(unchecked: try string()))
        case UInt8(ascii: "g"): return .signature(Signature(unchecked: try signatureValue()))
        case UInt8(ascii: "v"): return .variant(try variant())
        case UInt8(ascii: "("):
            try align(8)
            var members: [DBusValue] = []
            while index < signature.count, signature[index] != UInt8(ascii: ")") {
                members.append(try read(at: &index))
            }
            index += 1
            return .structure(members)
        case UInt8(ascii: "a"): return try array(at: &index)
        case UInt8(ascii: "h"): throw .unsupported
        default: throw Self.malformed("unsupported type code \(code)")
        }
    }

    private mutating func array(at index: inout Int) throws(WireFailure) -> DBusValue {
        let length = Int(try number(UInt32.self))
        let elementStart = index
        let elementEnd = try Self.end(of: signature, at: elementStart)
        try align(WireWriter.alignment(of: signature[elementStart]))
        let end = offset + length
        guard end <= body.count else { throw Self.malformed("array runs past the end of the body") }
        defer { index = elementEnd }
        let fixedSize: Int? = switch signature[elementStart] {
        case UInt8(ascii: "y"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): 8
        default: nil
        }
        if let fixedSize, length / fixedSize > maximumArrayElements { throw tooManyElements() }
        if signature[elementStart] == UInt8(ascii: "{") {
            let keyType = Signature(unchecked: String(decoding: signature[(elementStart + 1)...(elementStart + 1)], as: UTF8.self))
            let valueType = Signature(unchecked: String(decoding: signature[(elementStart + 2)..<(elementEnd - 1)], as: UTF8.self))
            var entries: [(key: DBusValue, value: DBusValue)] = []
            let bounded = keyType.rawValue == "s" && valueType.rawValue == "v"
            while offset < end {
                if bounded, entries.count == maximumVariantDictionaryEntries {
                    throw .invalid(DBusError.invalidArgs("a dictionary (a{sv}) of more than \(maximumVariantDictionaryEntries) entries: no argument of this interface has that many keys"))
                }
                try align(8)
                var cursor = elementStart + 1
                let key = try read(at: &cursor)
                let value = try read(at: &cursor)
                entries.append((key: key, value: value))
            }
            guard offset == end else { throw Self.malformed("dictionary entries overrun its length") }
            return .dictionary(key: keyType, value: valueType, entries)
        }
        var items: [DBusValue] = []
        while offset < end {
            if items.count == maximumArrayElements { throw tooManyElements() }
            var cursor = elementStart
            items.append(try read(at: &cursor))
        }
        guard offset == end else { throw Self.malformed("array elements overrun its length") }
        return .array(element: Signature(unchecked: String(decoding: signature[elementStart..<elementEnd], as: UTF8.self)), items)
    }

    private mutating func variant() throws(WireFailure) -> DBusValue {
        let inner = Array(try signatureValue().utf8)
        guard !inner.isEmpty, (try? Self.end(of: inner, at: 0)) == inner.count else { throw Self.malformed("a variant must hold one complete type") }
        var nested = WireReader(body: body, signature: inner, bigEndian: bigEndian, offset: offset)
        nested.maximumVariantDictionaryEntries = maximumVariantDictionaryEntries
        nested.maximumArrayElements = maximumArrayElements
        var index = 0
        let value = try nested.read(at: &index)
        offset = nested.offset
        return value
    }

    private init(body: UnsafeRawBufferPointer, signature: [UInt8], bigEndian: Bool, offset: Int) {
        self.body = body
        self.signature = signature
        self.bigEndian = bigEndian
        self.offset = offset
    }

    // MARK: Pieces

    private mutating func align(_ boundary: Int) throws(WireFailure) {
        let aligned = (offset + boundary - 1) / boundary * boundary
        guard aligned <= body.count else { throw Self.malformed("padding runs past the end of the body") }
        offset = aligned
    }

    private mutating func number<T: FixedWidthInteger>(_: T.Type) throws(WireFailure) -> T {
        try align(MemoryLayout<T>.size)
        guard offset + MemoryLayout<T>.size <= body.count else { throw Self.malformed("a number runs past the end of the body") }
        let raw = body.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    private mutating func string() throws(WireFailure) -> String {
        let length = Int(try number(UInt32.self))
        return try text(length: length)
    }

    private mutating func signatureValue() throws(WireFailure) -> String {
        let length = Int(try number(UInt8.self))
        return try text(length: length)
    }

    /// `length` bytes of UTF-8 and their terminating NUL.
    private mutating func text(length: Int) throws(WireFailure) -> String {
        guard offset + length < body.count, body[offset + length] == 0 else { throw Self.malformed("a string runs past the end of the body") }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: body[offset..<(offset + length)]), as: UTF8.self)
        offset += length + 1
        return value
    }

    /// The index just past the complete type starting at `signature[index]`.
    static func end(of signature: [UInt8], at index: Int) throws(WireFailure) -> Int {
        guard index < signature.count else { throw malformed("signature ends inside a type") }
        switch signature[index] {
        case UInt8(ascii: "a"): return try end(of: signature, at: index + 1)
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            let close = signature[index] == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
            var cursor = index + 1
            while cursor < signature.count, signature[cursor] != close { cursor = try end(of: signature, at: cursor) }
            guard cursor < signature.count else { throw malformed("signature ends inside a container") }
            return cursor + 1
        default: return index + 1
        }
    }

    private static func malformed(_ what: String) -> WireFailure {
        .invalid(.invalidArgs("malformed message body: \(what)"))
    }
}
