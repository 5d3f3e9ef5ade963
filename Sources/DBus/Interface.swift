/// One D-Bus interface, declared once: its methods with their handlers, its
/// properties with their accessors and its signals. Dispatch, signature
/// checks, introspection XML, `Properties` and `ObjectManager` all come from
/// this one declaration.
///
/// ```swift
/// Interface("org.example.Greeter1") {
///     Method("Greet", in: ["name": "s"], out: ["greeting": "s"]) { call in
///         let name = try call.decode(String.self)
///         return .values([.string("Hello, \(name)")])
///     }
///     Property("Version", "s") { .string("1.0") }
///     Signal("Greeted", ["name": "s"])
/// }
/// ```
public struct Interface {
    public let name: String
    public private(set) var methods: [Method] = []
    public private(set) var properties: [Property] = []
    public private(set) var signals: [Signal] = []

    public init(_ name: String, @InterfaceBuilder _ members: () -> [Member]) {
        // Names are checked in debug builds (every test run): members declared through specs were
        // checked as the specs were made, and an object exported for each call rebuilds its
        // interface, which in release builds checked the same names again at every export.
        assert(Names.isValidInterface(name), "invalid interface name '\(name)'")
        self.name = name
        for member in members() {
            switch member {
            case .method(let method): methods.append(method)
            case .property(let property): properties.append(property)
            case .signal(let signal): signals.append(signal)
            }
        }
    }

    public func method(_ name: String) -> Method? { methods.first { $0.name == name } }
    public func property(_ name: String) -> Property? { properties.first { $0.name == name } }
    public func signal(_ name: String) -> Signal? { signals.first { $0.name == name } }
}

/// A named argument of a method or signal.
public struct NamedArgument: Sendable, Equatable {
    public let name: String
    public let signature: Signature
    public init(_ name: String, _ signature: Signature) {
        self.name = name
        self.signature = signature
    }
}

/// What a method handler does about its reply.
public enum MethodReply: Sendable {
    /// Reply now with these values.
    case values([DBusValue])
    /// The handler keeps the `MethodCall` and replies later with `reply` or `fail`.
    case later

    public static let empty = MethodReply.values([])
}

public struct Method {
    public var name: String { storage.name }
    public var inputs: [NamedArgument] { storage.inputs }
    public var outputs: [NamedArgument] { storage.outputs }
    var handler: (MethodCall) throws -> MethodReply { storage.handler }
    /// The most bytes the arguments may take on the wire; nil: the connection's bound.
    var maximumArgumentBytes: Int? { storage.maximumArgumentBytes }
    /// Whether the handler reads its arguments itself (a spec's: `Args.read`), so that the server
    /// reads none for it.
    var readsItsArguments: Bool { storage.readsItsArguments }
    public var inputSignature: Signature { storage.inputSignature }
    public var outputSignature: Signature { storage.outputSignature }

    /// The fields, shared by the copies: dispatch copies the method it finds for each call, and a
    /// copy of the fields themselves cost six reference counts (callgrind, Get and Identify:
    /// `Method` copies and releases about 1,000 instructions a call).
    private final class Storage {
        let name: String
        let inputs: [NamedArgument]
        let outputs: [NamedArgument]
        let handler: (MethodCall) throws -> MethodReply
        let maximumArgumentBytes: Int?
        let readsItsArguments: Bool
        let inputSignature: Signature
        let outputSignature: Signature

        init(name: String, inputs: [NamedArgument], outputs: [NamedArgument], maximumArgumentBytes: Int?, readsItsArguments: Bool,
             handler: @escaping (MethodCall) throws -> MethodReply) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
            self.handler = handler
            self.maximumArgumentBytes = maximumArgumentBytes
            self.readsItsArguments = readsItsArguments
            // Computed once: every incoming call is checked against it.
            self.inputSignature = Signature(concatenating: inputs.map(\.signature))
            self.outputSignature = Signature(concatenating: outputs.map(\.signature))
        }
    }
    private let storage: Storage

    public init(_ name: String, in inputs: KeyValuePairs<String, Signature> = [:], out outputs: KeyValuePairs<String, Signature> = [:],
                handler: @escaping (MethodCall) throws -> MethodReply) {
        self.init(name, inputs: inputs.map { NamedArgument($0.key, $0.value) }, outputs: outputs.map { NamedArgument($0.key, $0.value) },
                  handler: handler)
    }

    init(_ name: String, inputs: [NamedArgument], outputs: [NamedArgument], maximumArgumentBytes: Int? = nil, readsItsArguments: Bool = false,
         handler: @escaping (MethodCall) throws -> MethodReply) {
        assert(Names.isValidMember(name), "invalid method name '\(name)'")
        storage = Storage(name: name, inputs: inputs, outputs: outputs, maximumArgumentBytes: maximumArgumentBytes,
                          readsItsArguments: readsItsArguments, handler: handler)
    }
}

public struct Property {
    public enum Access: String, Sendable { case read, write, readwrite }
    /// How changes are announced in `PropertiesChanged`.
    public enum ChangeSignal: Sendable { case value, invalidates, none }

    public let name: String
    public let signature: Signature
    public let changeSignal: ChangeSignal
    /// The value on the object at `path` as `reader` may see it (nil: no reader known, such as the
    /// service itself).
    let getter: (_ path: ObjectPath, _ reader: Caller?) throws -> DBusValue
    let setter: ((DBusValue, MethodCall) throws -> Void)?
    /// Whether readers may see different values (`init(_:_:changeSignal:set:perReader:)`):
    /// a signal carrying it is then built for each recipient.
    let variesByReader: Bool

    public var access: Access { setter == nil ? .read : .readwrite }

    /// A property; with `set` it is writable. The setter receives a value already
    /// checked against `signature`.
    public init(_ name: String, _ signature: Signature, changeSignal: ChangeSignal = .value,
                set: ((DBusValue, MethodCall) throws -> Void)? = nil, get: @escaping () throws -> DBusValue) {
        self.init(name, signature, changeSignal: changeSignal, set: set, variesByReader: false) { _, _ in try get() }
    }

    /// A property whose value depends on who reads it: `get` receives the reader (the caller of
    /// `Get`, `GetAll` or `GetManagedObjects`, or the recipient of a signal) as the access policy
    /// identified it, nil when there is no policy.
    public init(_ name: String, _ signature: Signature, changeSignal: ChangeSignal = .value,
                set: ((DBusValue, MethodCall) throws -> Void)? = nil, perReader get: @escaping (Caller?) throws -> DBusValue) {
        self.init(name, signature, changeSignal: changeSignal, set: set, variesByReader: true) { _, reader in try get(reader) }
    }

    /// A read-only property read for the object it is read on (`get` receives its path), so that one
    /// interface, made once, serves many objects alike (a call's): `variesByReader` as above.
    public init(_ name: String, _ signature: Signature, changeSignal: ChangeSignal = .value, variesByReader: Bool,
                ofObject get: @escaping (_ path: ObjectPath, _ reader: Caller?) throws -> DBusValue) {
        self.init(name, signature, changeSignal: changeSignal, set: nil, variesByReader: variesByReader, get: get)
    }

    private init(_ name: String, _ signature: Signature, changeSignal: ChangeSignal,
                 set: ((DBusValue, MethodCall) throws -> Void)?, variesByReader: Bool,
                 get: @escaping (_ path: ObjectPath, _ reader: Caller?) throws -> DBusValue) {
        assert(Names.isValidMember(name), "invalid property name '\(name)'")
        assert(signature.isSingleCompleteType, "a property has exactly one complete type")
        self.name = name
        self.signature = signature
        self.changeSignal = changeSignal
        self.getter = get
        self.setter = set
        self.variesByReader = variesByReader
    }
}

public struct Signal {
    public let name: String
    public let arguments: [NamedArgument]

    public init(_ name: String, _ arguments: KeyValuePairs<String, Signature> = [:]) {
        self.init(name, arguments: arguments.map { NamedArgument($0.key, $0.value) })
    }

    init(_ name: String, arguments: [NamedArgument]) {
        assert(Names.isValidMember(name), "invalid signal name '\(name)'")
        self.name = name
        self.arguments = arguments
    }

    public var signature: Signature { Signature(concatenating: arguments.map(\.signature)) }
}

public enum Member {
    case method(Method)
    case property(Property)
    case signal(Signal)
}

@resultBuilder
public enum InterfaceBuilder {
    public static func buildExpression(_ method: Method) -> [Member] { [.method(method)] }
    public static func buildExpression(_ property: Property) -> [Member] { [.property(property)] }
    public static func buildExpression(_ signal: Signal) -> [Member] { [.signal(signal)] }
    public static func buildExpression(_ properties: [Property]) -> [Member] { properties.map(Member.property) }
    public static func buildExpression(_ members: [Member]) -> [Member] { members }
    public static func buildBlock(_ parts: [Member]...) -> [Member] { parts.flatMap { $0 } }
    public static func buildArray(_ parts: [[Member]]) -> [Member] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Member]?) -> [Member] { part ?? [] }
    public static func buildEither(first: [Member]) -> [Member] { first }
    public static func buildEither(second: [Member]) -> [Member] { second }
}
