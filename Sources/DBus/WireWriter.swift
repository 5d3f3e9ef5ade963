import Glibc

/// Writes `DBusValue`s in the D-Bus wire format (little-endian), as a message
/// body. libdbus' iterators cost over a microsecond a value (a page of
/// Recents, 50 × 14 variants, took ~0.8 ms); writing the bytes here and
/// letting libdbus validate them in one pass costs less, and the validation
/// is most of it.
///
/// Checks what `Marshal.append` checks (element types, NULs, key types); what
/// only the wire format can tell (nesting depth, sizes) is left to libdbus'
/// validation of the finished message.
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ value: DBusValue) throws(WireFailure) {
        switch value {
        case .byte(let v): bytes.append(v)
        case .bool(let v): put(UInt32(v ? 1 : 0))
        case .int16(let v): put(v)
        case .uint16(let v): put(v)
        case .int32(let v): put(v)
        case .uint32(let v): put(v)
        case .int64(let v): put(v)
        case .uint64(let v): put(v)
        case .double(let v): put(v.bitPattern)
        case .string(let v): try putString(v)
        case .objectPath(let v): try putString(v.rawValue)
        case .signature(let v): putSignature(v.rawValue)
        case .unixFD: throw .unsupported
        case .array(let element, let items):
            let elementCode = element.rawValue.utf8.first ?? 0
            try putArray(alignment: Self.alignment(of: elementCode)) { (writer) throws(WireFailure) in
                for item in items {
                    guard item.signatureString == element.rawValue else {
                        throw .invalid(ValueRules.mixedArray(element, holding: item))
                    }
                    try writer.write(item)
                }
            }
        case .dictionary(let key, let valueType, let entries):
            guard ValueRules.isBasicKey(key) else { throw .invalid(ValueRules.notBasicKey(key)) }
            try putArray(alignment: 8) { (writer) throws(WireFailure) in
                for entry in entries {
                    guard entry.key.signatureString == key.rawValue, entry.value.signatureString == valueType.rawValue else {
                        throw .invalid(ValueRules.mixedDictionary(key, valueType, holding: entry))
                    }
                    writer.align(8)
                    try writer.write(entry.key)
                    try writer.write(entry.value)
                }
            }
        case .structure(let members):
            guard !members.isEmpty else { throw .invalid(ValueRules.emptyStruct) }
            align(8)
            for member in members { try write(member) }
        case .variant(let inner):
            let signature = inner.signatureString
            putSignature(signature)
            align(Self.alignment(of: signature.utf8.first ?? 0))
            try write(inner)
        }
    }

    // MARK: Pieces

    mutating func align(_ boundary: Int) {
        let padding = (boundary - bytes.count % boundary) % boundary
        if padding > 0 { bytes.append(contentsOf: repeatElement(0, count: padding)) }
    }

    mutating func append(contentsOf raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    mutating func put<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites a 32-bit number written earlier (an array's length).
    mutating func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    private mutating func putString(_ value: String) throws(WireFailure) {
        var value = value
        let fine = value.withUTF8 { (utf8: UnsafeBufferPointer<UInt8>) -> Bool in
            guard utf8.baseAddress.map({ memchr($0, 0, utf8.count) == nil }) ?? true else { return false }
            put(UInt32(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            return true
        }
        guard fine else { throw .invalid(ValueRules.nulInString) }
    }

    mutating func putSignature(_ value: String) {
        bytes.append(UInt8(truncatingIfNeeded: value.utf8.count))
        bytes.append(contentsOf: value.utf8)
        bytes.append(0)
    }

    /// One entry of an `a{sv}`: its key, then the value as a variant of `signature`.
    mutating func putVariantEntry(_ key: String, _ signature: Signature, _ value: DBusValue) throws(WireFailure) {
        align(8)
        try putString(key)
        putSignature(signature.rawValue)
        align(Self.alignment(of: signature.rawValue.utf8.first ?? 0))
        try write(value)
    }

    /// Length, padding to the first element, elements; the length counts the elements' bytes only.
    mutating func putArray(alignment: Int, _ elements: (inout WireWriter) throws(WireFailure) -> Void) throws(WireFailure) {
        put(UInt32(0))
        let lengthOffset = bytes.count - 4
        align(alignment)
        let start = bytes.count
        try elements(&self)
        patch(UInt32(truncatingIfNeeded: bytes.count - start), at: lengthOffset)
    }

    /// The boundary a value of the type starting with `code` is aligned to.
    static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"), UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "a"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1
        }
    }
}

/// Why the bytes could not be written or read.
enum WireFailure: Error {
    case invalid(DBusError)
    /// A value left to libdbus' iterators: unix fds travel beside the bytes.
    case unsupported
}
