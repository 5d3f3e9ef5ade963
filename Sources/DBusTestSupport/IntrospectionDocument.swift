/// The shape of the interfaces in a D-Bus introspection document: method,
/// signal and property names with their types, so that tests can check the
/// XML in `dbus/` against what a live object reports.
///
/// Only the root `<node>`'s own interfaces are read; child `<node>`s,
/// annotations, output argument names and unknown elements are ignored. The parser is
/// a small tag scanner rather than Foundation's `XMLParser`, which would need
/// libxml2 at run time.
public struct IntrospectionDocument: Equatable, Sendable {
    /// One member of an interface, with everything that makes up its contract.
    public struct Member: Hashable, Sendable, CustomStringConvertible {
        public enum Kind: String, Hashable, Sendable, Comparable {
            case method, signal, property

            public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.order < rhs.order }
            private var order: Int {
                switch self {
                case .method: 0
                case .signal: 1
                case .property: 2
                }
            }
        }

        public var kind: Kind
        public var name: String
        /// For a method, its in and out signatures; for a signal, its
        /// signature; for a property, its type and access.
        public var signature: [String]

        /// The signature as people read it: `in (s) out (o)`, `(ss)`, `b readwrite`.
        public var shape: String {
            switch kind {
            case .method: "in (\(signature.first ?? "")) out (\(signature.dropFirst().first ?? ""))"
            case .signal: "(\(signature.joined()))"
            case .property: signature.joined(separator: " ")
            }
        }

        public var description: String { "\(kind.rawValue) \(name) \(shape)" }
    }

    /// A method's argument types, in order.
    public struct MethodShape: Equatable, Sendable {
        public var `in`: [String]
        public var out: [String]
        /// The input arguments' names, where the document gives them ("" where not).
        /// Not part of the contract: two shapes that differ only here are equal.
        public var inNames: [String]

        public init(in: [String], out: [String], inNames: [String]? = nil) {
            self.in = `in`
            self.out = out
            self.inNames = inNames ?? Array(repeating: "", count: `in`.count)
        }

        public static func == (lhs: MethodShape, rhs: MethodShape) -> Bool { lhs.in == rhs.in && lhs.out == rhs.out }
    }

    /// A property's type and access (`read`, `write` or `readwrite`).
    public struct PropertyShape: Equatable, Sendable {
        public var type: String
        public var access: String
    }

    public struct InterfaceShape: Equatable, Sendable {
        public var methods: [String: MethodShape] = [:]
        /// Each signal's argument types, in order.
        public var signals: [String: [String]] = [:]
        public var properties: [String: PropertyShape] = [:]

        /// Every member, methods first, then signals, then properties, each by name.
        public var members: [Member] {
            let methods = self.methods.map { Member(kind: .method, name: $0.key, signature: [$0.value.in.joined(), $0.value.out.joined()]) }
            let signals = self.signals.map { Member(kind: .signal, name: $0.key, signature: $0.value) }
            let properties = self.properties.map { Member(kind: .property, name: $0.key, signature: [$0.value.type, $0.value.access]) }
            return (methods + signals + properties).sorted { ($0.kind, $0.name) < ($1.kind, $1.name) }
        }
    }

    /// Why a document could not be read, and where.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String

        public var description: String { "introspection XML, line \(line): \(message)" }
    }

    /// The root node's interfaces, by name.
    public var interfaces: [String: InterfaceShape]

    public init(interfaces: [String: InterfaceShape]) {
        self.interfaces = interfaces
    }

    public init(xml: String) throws {
        var scanner = TagScanner(xml)
        let root = try scanner.document()
        guard root.name == "node" else {
            throw ParseError(line: root.line, message: "the root element is <\(root.name)>, not <node>")
        }
        var interfaces: [String: InterfaceShape] = [:]
        for element in root.children where element.name == "interface" {
            let name = try element.required("name")
            guard interfaces[name] == nil else {
                throw ParseError(line: element.line, message: "interface \(name) is declared twice")
            }
            interfaces[name] = try Self.interface(element, named: name)
        }
        self.interfaces = interfaces
    }

    private static func interface(_ element: Element, named interface: String) throws -> InterfaceShape {
        var shape = InterfaceShape()
        var seen: Set<String> = []
        for member in element.children where ["method", "signal", "property"].contains(member.name) {
            let name = try member.required("name")
            // D-Bus has no overloading: one name, one member, whatever its kind.
            guard seen.insert(name).inserted else {
                throw ParseError(line: member.line, message: "\(interface) declares \(name) twice")
            }
            switch member.name {
            case "method":
                var method = MethodShape(in: [], out: [])
                for arg in member.children where arg.name == "arg" {
                    let type = try arg.required("type")
                    switch arg.attributes["direction"] ?? "in" {
                    case "in":
                        method.in.append(type)
                        method.inNames.append(arg.attributes["name"] ?? "")
                    case "out": method.out.append(type)
                    case let direction:
                        throw ParseError(line: arg.line, message: "argument direction \"\(direction)\" in \(interface).\(name)")
                    }
                }
                shape.methods[name] = method
            case "signal":
                shape.signals[name] = try member.children.filter { $0.name == "arg" }.map { try $0.required("type") }
            default:
                let type = try member.required("type")
                let access = try member.required("access")
                guard ["read", "write", "readwrite"].contains(access) else {
                    throw ParseError(line: member.line, message: "property access \"\(access)\" in \(interface).\(name)")
                }
                shape.properties[name] = PropertyShape(type: type, access: access)
            }
        }
        return shape
    }

    /// How the named interfaces differ between this document ("here") and
    /// `other` ("there"), one line per difference, such as
    /// `org.x.Y: method Foo in (s) out () here, in (i) out () there` or
    /// `org.x.Y: signal Bar missing there`. Empty when they agree.
    public func differences(from other: IntrospectionDocument, interfaces names: [String]) -> [String] {
        var lines: [String] = []
        for interface in names {
            switch (interfaces[interface], other.interfaces[interface]) {
            case (nil, nil):
                lines.append("\(interface): interface missing here and there")
            case (nil, _):
                lines.append("\(interface): interface missing here")
            case (_, nil):
                lines.append("\(interface): interface missing there")
            case let (here?, there?):
                let hereMembers = Dictionary(uniqueKeysWithValues: here.members.map { (Key($0), $0) })
                let thereMembers = Dictionary(uniqueKeysWithValues: there.members.map { (Key($0), $0) })
                for key in Set(hereMembers.keys).union(thereMembers.keys).sorted() {
                    let label = "\(interface): \(key.kind.rawValue) \(key.name)"
                    switch (hereMembers[key], thereMembers[key]) {
                    case let (mine?, theirs?) where mine != theirs:
                        lines.append("\(label) \(mine.shape) here, \(theirs.shape) there")
                    case (_?, nil):
                        lines.append("\(label) missing there")
                    case (nil, _?):
                        lines.append("\(label) missing here")
                    default:
                        break
                    }
                }
            }
        }
        return lines
    }

    /// A member's identity, apart from its signature.
    private struct Key: Hashable, Comparable {
        var kind: Member.Kind
        var name: String

        init(_ member: Member) {
            kind = member.kind
            name = member.name
        }

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.kind, lhs.name) < (rhs.kind, rhs.name) }
    }
}

/// An XML element, reduced to what introspection needs.
private struct Element {
    var name: String
    var attributes: [String: String]
    var children: [Element] = []
    var line: Int

    func required(_ attribute: String) throws -> String {
        guard let value = attributes[attribute] else {
            throw IntrospectionDocument.ParseError(line: line, message: "<\(name)> has no \(attribute) attribute")
        }
        return value
    }
}

/// Reads the subset of XML that introspection documents use: elements and
/// attributes; the XML declaration, DOCTYPE, comments, processing
/// instructions, CDATA and text are skipped.
private struct TagScanner {
    private let bytes: [UInt8]
    /// Offsets of the line feeds, to name lines in errors and elements.
    private let lineFeeds: [Int]
    private var index = 0

    init(_ text: String) {
        let bytes = Array(text.utf8)
        self.bytes = bytes
        lineFeeds = bytes.indices.filter { bytes[$0] == 0x0A }
    }

    /// The root element, with its children. Child `<node>`s are kept empty:
    /// what they contain belongs to other objects.
    mutating func document() throws -> Element {
        var stack: [Element] = []
        var root: Element?
        // Depth inside a child <node> whose contents are skipped; 0 when reading.
        var skipping = 0

        func close(_ element: Element) throws {
            if stack.isEmpty {
                guard root == nil else { throw error("a second root element <\(element.name)>", at: element.line) }
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        while let tag = try nextTag() {
            switch tag {
            case let .start(name, attributes, selfClosing, line):
                if skipping > 0 {
                    if !selfClosing { skipping += 1 }
                    continue
                }
                let element = Element(name: name, attributes: attributes, line: line)
                if selfClosing {
                    try close(element)
                } else {
                    if name == "node" && !stack.isEmpty { skipping = 1 }
                    stack.append(element)
                }
            case let .end(name, line):
                guard let open = stack.last else { throw error("</\(name)> closes nothing", at: line) }
                if skipping > 1 {
                    skipping -= 1
                    continue
                }
                guard open.name == name else {
                    throw error("</\(name)> closes <\(open.name)> from line \(open.line)", at: line)
                }
                skipping = 0
                try close(stack.removeLast())
            }
        }
        if let open = stack.last {
            throw error("<\(open.name)> is never closed", at: open.line)
        }
        guard let root else { throw error("no root element", at: line(of: index)) }
        return root
    }

    private enum Tag {
        case start(name: String, attributes: [String: String], selfClosing: Bool, line: Int)
        case end(name: String, line: Int)
    }

    private mutating func nextTag() throws -> Tag? {
        while true {
            // Text between tags carries nothing in introspection.
            while index < bytes.count && bytes[index] != ascii("<") { index += 1 }
            guard index < bytes.count else { return nil }
            let start = index
            if hasPrefix("<!--") {
                try skip(past: "-->", what: "comment", from: start)
            } else if hasPrefix("<![CDATA[") {
                try skip(past: "]]>", what: "CDATA section", from: start)
            } else if hasPrefix("<?") {
                try skip(past: "?>", what: "processing instruction", from: start)
            } else if hasPrefix("<!") {
                try skipDeclaration(from: start)
            } else if hasPrefix("</") {
                index += 2
                let name = try self.name()
                skipSpace()
                try expect(">", in: "</\(name)")
                return .end(name: name, line: line(of: start))
            } else {
                index += 1
                return try startTag(from: start)
            }
        }
    }

    private mutating func startTag(from start: Int) throws -> Tag {
        let name = try self.name()
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = skipSpace()
            guard index < bytes.count else { throw error("<\(name) is never closed", at: line(of: start)) }
            if bytes[index] == ascii(">") {
                index += 1
                return .start(name: name, attributes: attributes, selfClosing: false, line: line(of: start))
            }
            if hasPrefix("/>") {
                index += 2
                return .start(name: name, attributes: attributes, selfClosing: true, line: line(of: start))
            }
            guard hadSpace else { throw error("expected a space, > or /> in <\(name)", at: line(of: index)) }
            let attribute = try self.name()
            skipSpace()
            try expect("=", in: "attribute \(attribute) of <\(name)>")
            skipSpace()
            guard index < bytes.count, bytes[index] == ascii("\"") || bytes[index] == ascii("'") else {
                throw error("attribute \(attribute) of <\(name)> has no quoted value", at: line(of: index))
            }
            let quote = bytes[index]
            let valueStart = index + 1
            guard let end = bytes[valueStart...].firstIndex(of: quote) else {
                throw error("attribute \(attribute) of <\(name)> is never closed", at: line(of: index))
            }
            index = end + 1
            guard attributes[attribute] == nil else {
                throw error("attribute \(attribute) appears twice in <\(name)>", at: line(of: valueStart))
            }
            attributes[attribute] = try decode(bytes[valueStart..<end], at: line(of: valueStart))
        }
    }

    /// XML's five predefined entities, by name.
    private static let predefinedEntities: [Substring: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]

    /// Replaces the predefined and numeric character references.
    private func decode(_ raw: ArraySlice<UInt8>, at line: Int) throws -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else {
                throw error("an & that starts no entity", at: line)
            }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            if let predefined = Self.predefinedEntities[entity] {
                result += predefined
            } else {
                let scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    scalar = nil
                }
                guard let scalar else { throw error("unknown entity &\(entity);", at: line) }
                result.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// `<!DOCTYPE ...>` and the like: up to the `>` that is outside quotes and
    /// any `[...]` internal subset.
    private mutating func skipDeclaration(from start: Int) throws {
        var quote: UInt8?
        var brackets = 0
        index += 2
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == ascii("\"") || byte == ascii("'") {
                quote = byte
            } else if byte == ascii("[") {
                brackets += 1
            } else if byte == ascii("]") {
                brackets -= 1
            } else if byte == ascii(">") && brackets <= 0 {
                return
            }
        }
        throw error("declaration is never closed", at: line(of: start))
    }

    private mutating func skip(past terminator: String, what: String, from start: Int) throws {
        let terminator = Array(terminator.utf8)
        index = start + 2
        while index + terminator.count <= bytes.count {
            if bytes[index..<index + terminator.count].elementsEqual(terminator) {
                index += terminator.count
                return
            }
            index += 1
        }
        throw error("\(what) is never closed", at: line(of: start))
    }

    /// An element or attribute name: anything up to a space, `=`, `/`, `>` or quote.
    private mutating func name() throws -> String {
        let start = index
        while index < bytes.count, !isSpace(bytes[index]), !"=/>\"'<".utf8.contains(bytes[index]) { index += 1 }
        guard index > start else { throw error("expected a name", at: line(of: start)) }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func expect(_ character: Character, in context: String) throws {
        guard index < bytes.count, bytes[index] == character.asciiValue else {
            throw error("expected \(character) after \(context)", at: line(of: index))
        }
        index += 1
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count && isSpace(bytes[index]) { index += 1 }
        return index > start
    }

    private func hasPrefix(_ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return index + prefix.count <= bytes.count && bytes[index..<index + prefix.count].elementsEqual(prefix)
    }

    private func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private func ascii(_ character: Character) -> UInt8 { character.asciiValue! }

    private func line(of offset: Int) -> Int {
        // 1 + the number of line feeds before offset, by binary search.
        var low = 0, high = lineFeeds.count
        while low < high {
            let middle = (low + high) / 2
            if lineFeeds[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low + 1
    }

    private func error(_ message: String, at line: Int) -> IntrospectionDocument.ParseError {
        IntrospectionDocument.ParseError(line: line, message: message)
    }
}
