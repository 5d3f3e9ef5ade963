internal import CDBus

/// Conversion between `DBusValue` and libdbus message iterators.
enum Marshal {
    // MARK: Reading

    static func read(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case TypeCode.byte: return .byte(basic(&iter, UInt8(0)))
        case TypeCode.boolean: return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(basic(&iter, Int16(0)))
        case TypeCode.uint16: return .uint16(basic(&iter, UInt16(0)))
        case TypeCode.int32: return .int32(basic(&iter, Int32(0)))
        case TypeCode.uint32: return .uint32(basic(&iter, UInt32(0)))
        case TypeCode.int64: return .int64(basic(&iter, Int64(0)))
        case TypeCode.uint64: return .uint64(basic(&iter, UInt64(0)))
        case TypeCode.double: return .double(basic(&iter, Double(0)))
        case TypeCode.string: return .string(string(&iter))
        case TypeCode.objectPath: return .objectPath(ObjectPath(unchecked: string(&iter)))
        case TypeCode.signature: return .signature(Signature(unchecked: string(&iter)))
        case TypeCode.unixFD:
            // libdbus hands out a duplicate that the reader owns.
            return .unixFD(UnixFD(owning: basic(&iter, Int32(-1))))
        case TypeCode.array: return try readArray(&iter)
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(try readAll(&sub))
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub))
        default:
            throw DBusError.invalidArgs("unsupported D-Bus type code \(type)")
        }
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
        return value
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func readAll(_ iter: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            values.append(try read(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    private static func readArray(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let full = currentSignature(&iter)
        let element = String(full.dropFirst())
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if element.hasPrefix("{") {
            // "{kv}": the key is one basic type code, the value the rest (libdbus validated it).
            let bytes = Array(element.utf8)
            guard bytes.count >= 4 else { throw DBusError.invalidArgs("malformed dictionary signature '\(full)'") }
            let inner = [String(decoding: bytes[1...1], as: UTF8.self), String(decoding: bytes[2..<(bytes.count - 1)], as: UTF8.self)]
            var entries: [(key: DBusValue, value: DBusValue)] = []
            while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictEntry {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                let key = try read(&entry)
                dbus_message_iter_next(&entry)
                let value = try read(&entry)
                entries.append((key: key, value: value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: Signature(unchecked: inner[0]), value: Signature(unchecked: inner[1]), entries)
        }
        if let fixed = readFixedArray(&sub, element: element) {
            return .array(element: Signature(unchecked: element), fixed)
        }
        return .array(element: Signature(unchecked: element), try readAll(&sub))
    }

    /// Arrays of fixed-size numbers are read in one step (large blocklists, icons).
    private static func readFixedArray(_ sub: inout DBusMessageIter, element: String) -> [DBusValue]? {
        switch element {
        case "y": fixed(&sub, UInt8.self).map(DBusValue.byte)
        case "n": fixed(&sub, Int16.self).map(DBusValue.int16)
        case "q": fixed(&sub, UInt16.self).map(DBusValue.uint16)
        case "i": fixed(&sub, Int32.self).map(DBusValue.int32)
        case "u": fixed(&sub, UInt32.self).map(DBusValue.uint32)
        case "x": fixed(&sub, Int64.self).map(DBusValue.int64)
        case "t": fixed(&sub, UInt64.self).map(DBusValue.uint64)
        case "d": fixed(&sub, Double.self).map(DBusValue.double)
        default: nil
        }
    }

    private static func fixed<T>(_ sub: inout DBusMessageIter, _ type: T.Type) -> [T] {
        var pointer: UnsafeRawPointer? = nil
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, UnsafeMutableRawPointer($0), &count) }
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: T.self), count: Int(count)))
    }

    private static func currentSignature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    // MARK: Writing

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        let ok: Bool
        switch value {
        case .byte(let v): ok = appendBasic(&iter, TypeCode.byte, v)
        case .bool(let v): ok = appendBasic(&iter, TypeCode.boolean, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): ok = appendBasic(&iter, TypeCode.int16, v)
        case .uint16(let v): ok = appendBasic(&iter, TypeCode.uint16, v)
        case .int32(let v): ok = appendBasic(&iter, TypeCode.int32, v)
        case .uint32(let v): ok = appendBasic(&iter, TypeCode.uint32, v)
        case .int64(let v): ok = appendBasic(&iter, TypeCode.int64, v)
        case .uint64(let v): ok = appendBasic(&iter, TypeCode.uint64, v)
        case .double(let v): ok = appendBasic(&iter, TypeCode.double, v)
        case .string(let v): ok = try appendString(&iter, TypeCode.string, v)
        case .objectPath(let v): ok = try appendString(&iter, TypeCode.objectPath, v.rawValue)
        case .signature(let v): ok = try appendString(&iter, TypeCode.signature, v.rawValue)
        case .unixFD(let fd): ok = appendBasic(&iter, TypeCode.unixFD, fd.rawValue)
        case .array(let element, let items):
            ok = try appendContainer(&iter, TypeCode.array, element.rawValue) { (sub) throws(DBusError) in
                if try appendFixedArray(&sub, element: element.rawValue, items) { return }
                for item in items {
                    guard item.signatureString == element.rawValue else {
                        throw ValueRules.mixedArray(element, holding: item)
                    }
                    try append(item, to: &sub)
                }
            }
        case .dictionary(let keySignature, let valueSignature, let entries):
            guard ValueRules.isBasicKey(keySignature) else { throw ValueRules.notBasicKey(keySignature) }
            ok = try appendContainer(&iter, TypeCode.array, "{\(keySignature)\(valueSignature)}") { (sub) throws(DBusError) in
                for entry in entries {
                    guard entry.key.signature == keySignature, entry.value.signature == valueSignature else {
                        throw ValueRules.mixedDictionary(keySignature, valueSignature, holding: entry)
                    }
                    _ = try appendContainer(&sub, TypeCode.dictEntry, nil) { (pair) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let members):
            guard !members.isEmpty else { throw ValueRules.emptyStruct }
            ok = try appendContainer(&iter, TypeCode.structure, nil) { (sub) throws(DBusError) in
                for member in members { try append(member, to: &sub) }
            }
        case .variant(let inner):
            ok = try appendContainer(&iter, TypeCode.variant, inner.signatureString) { (sub) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
        guard ok else { throw DBusError.noMemory }
    }

    private static func appendBasic<T>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) -> Bool {
        var copy = value
        return withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, type, UnsafeRawPointer($0)) } != 0
    }

    private static func appendString(_ iter: inout DBusMessageIter, _ type: Int32, _ value: String) throws(DBusError) -> Bool {
        guard !value.utf8.contains(0) else { throw ValueRules.nulInString }
        return value.withCString { cString in
            var pointer: UnsafePointer<CChar>? = cString
            return dbus_message_iter_append_basic(&iter, type, &pointer) != 0
        }
    }

    private static func appendContainer(
        _ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) -> Bool {
        var sub = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, type, signature, &sub) != 0 else { return false }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    /// Appends an array of fixed-size numbers in one step; false when `element` is not such a type.
    private static func appendFixedArray(_ sub: inout DBusMessageIter, element: String, _ items: [DBusValue]) throws(DBusError) -> Bool {
        func numbers<T>(_ code: Int32, _ extract: (DBusValue) -> T?) throws(DBusError) -> Bool {
            var buffer: [T] = []
            buffer.reserveCapacity(items.count)
            for item in items {
                guard let number = extract(item) else {
                    throw ValueRules.mixedArray(Signature(unchecked: element), holding: item)
                }
                buffer.append(number)
            }
            return buffer.withUnsafeBufferPointer { buf in
                var base = UnsafeRawPointer(buf.baseAddress)
                return withUnsafeMutablePointer(to: &base) {
                    dbus_message_iter_append_fixed_array(&sub, code, UnsafeRawPointer($0), Int32(buf.count)) != 0
                }
            }
        }
        let ok: Bool
        switch element {
        case "y": ok = try numbers(TypeCode.byte) { if case .byte(let v) = $0 { v } else { nil } }
        case "n": ok = try numbers(TypeCode.int16) { if case .int16(let v) = $0 { v } else { nil } }
        case "q": ok = try numbers(TypeCode.uint16) { if case .uint16(let v) = $0 { v } else { nil } }
        case "i": ok = try numbers(TypeCode.int32) { if case .int32(let v) = $0 { v } else { nil } }
        case "u": ok = try numbers(TypeCode.uint32) { if case .uint32(let v) = $0 { v } else { nil } }
        case "x": ok = try numbers(TypeCode.int64) { if case .int64(let v) = $0 { v } else { nil } }
        case "t": ok = try numbers(TypeCode.uint64) { if case .uint64(let v) = $0 { v } else { nil } }
        case "d": ok = try numbers(TypeCode.double) { if case .double(let v) = $0 { v } else { nil } }
        default: return false
        }
        guard ok else { throw DBusError.noMemory }
        return true
    }
}
