/// Typed declarations of a D-Bus API, written once and used by both ends.
///
/// A `MethodSpec`, `SignalSpec` or `PropertySpec` names a member, its
/// interface, its arguments with their Swift types, its documentation and the
/// errors it may return. A server registers a handler *for a spec*
/// (`Method(spec, owner: self, gone: error) { owner, call, a, b in ... }`), a client calls *through it*
/// (`connection.call(spec, destination:, path:, a, b)`), and the introspection
/// XML is generated from the same declarations (`IntrospectionXML`). No member
/// name or signature string is written anywhere else.
///
/// ```swift
/// enum Greeter1 {
///     static let interface = "org.example.Greeter1"
///     static let greet = MethodSpec(interface, "Greet", in: Arg("name", String.self), out: Arg("greeting", String.self),
///                                   doc: "Greets someone.")
/// }
/// ```

/// The Swift types of a list of arguments, as a type: `Args<String, Bool>`.
public protocol ArgumentTypes {
    static var signatures: [Signature] { get }
}

/// A list of argument types; never instantiated, only named.
public struct Args<each T: DBusRepresentable>: ArgumentTypes {
    public static var signatures: [Signature] {
        var result: [Signature] = []
        for type in repeat (each T).self { result.append(type.dbusSignature) }
        return result
    }

    /// The values as Swift types; a missing or mistyped value is `InvalidArgs` naming `context`.
    /// Inlinable, as `encode`, so that a handler's types are known where it is declared (`Method(_:owner:gone:_:)`).
    @inlinable
    public static func decode(_ values: [DBusValue], context: @autoclosure () -> String) throws(DBusError) -> (repeat each T) {
        var reader = ArgumentReader(values: values)
        return try Self.decoded(from: &reader, context: context())
    }

    /// A call's arguments, read off the wire straight into these types (one pass, no `DBusValue`
    /// list in between); a missing or mistyped value is `InvalidArgs` naming `context`.
    @inlinable
    public static func read(_ call: MethodCall, context: @autoclosure () -> String) throws(DBusError) -> (repeat each T) {
        var values: (repeat each T)?
        try call.withArguments { (reader: inout ArgumentReader) throws(DBusError) in
            let read: (repeat each T) = try Self.decoded(from: &reader, context: context())
            values = read
        }
        // Set by `withArguments`, which gives `read` the arguments or throws.
        guard let values else { throw DBusError.failed("\(context()): the arguments were not read") }
        return values
    }

    /// The next values of `reader` as these types.
    @inlinable
    static func decoded(from reader: inout ArgumentReader, context: @autoclosure () -> String) throws(DBusError) -> (repeat each T) {
        var index = 0
        func next<U: DBusRepresentable>(_ type: U.Type) throws(DBusError) -> U {
            defer { index += 1 }
            guard let value = try reader.next() else { throw DBusError.invalidArgs("\(context()): missing argument \(index + 1)") }
            return try U(dbusValue: value)
        }
        return (repeat try next((each T).self))
    }

    @inlinable
    public static func encode(_ values: repeat each T) -> [DBusValue] {
        var count = 0
        for _ in repeat each values { count += 1 }
        var result: [DBusValue] = []
        // Allocated once: appending two values one by one allocated the array twice.
        result.reserveCapacity(count)
        for value in repeat each values { result.append(value.dbusValue) }
        return result
    }
}

/// A named argument of a declared type: `Arg("call_uuid", String.self)`.
public struct Arg<T: DBusRepresentable>: Sendable {
    public let name: String
    public init(_ name: String, _ type: T.Type) {
        self.name = name
    }
}

/// What a declaration says of a member, whatever its types: what the XML and introspection are made of.
public struct MemberDescription: Sendable {
    public enum Kind: String, Sendable { case method, signal, property }
    public let kind: Kind
    public let interface: String
    public let name: String
    /// Method inputs or signal arguments.
    public let inputs: [NamedArgument]
    /// Method outputs.
    public let outputs: [NamedArgument]
    /// A property's type.
    public let type: Signature?
    public let access: Property.Access
    public let changeSignal: Property.ChangeSignal
    public let doc: String
    /// The D-Bus error names a method may return.
    public let errors: [String]
    /// The most bytes a method's arguments may take on the wire; nil: the connection's bound
    /// (`ObjectServer.limitArgumentBytes`).
    public var maximumArgumentBytes: Int? = nil
}

/// One member, whatever its kind, for listing an interface's members.
public protocol MemberSpec: Sendable {
    var description: MemberDescription { get }
}

private func names<each T>(_ arguments: repeat Arg<each T>) -> [String] {
    var result: [String] = []
    for argument in repeat each arguments { result.append(argument.name) }
    return result
}

private func zipped(_ names: [String], _ signatures: [Signature]) -> [NamedArgument] {
    zip(names, signatures).map { NamedArgument($0, $1) }
}

/// A method: `MethodSpec<Args<String, Bool>, Args<ObjectPath>>`.
public struct MethodSpec<In: ArgumentTypes, Out: ArgumentTypes>: MemberSpec {
    public let interface: String
    public let name: String
    public let inputNames: [String]
    public let outputNames: [String]
    public let doc: String
    public let errors: [String]
    /// The most bytes its arguments may take on the wire, for a method that takes more than its
    /// connection's bound (`ObjectServer.limitArgumentBytes`); nil: that bound.
    public let maximumArgumentBytes: Int?

    /// Made once, with the spec: an object exported for each call builds its interface from its
    /// specs' descriptions, and each made anew cost a fifth of an export (issue 55).
    public let description: MemberDescription
}

extension MethodSpec {
    /// `errors`: the D-Bus names of the errors the method may return, listed in the XML.
    public init<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ interface: String, _ name: String, in inputs: repeat Arg<each I>, out outputs: repeat Arg<each O>,
        doc: String, errors: [String] = [], maximumArgumentBytes: Int? = nil
    ) where In == Args<repeat each I>, Out == Args<repeat each O> {
        precondition(Names.isValidMember(name), "invalid method name '\(name)'")
        self.interface = interface
        self.name = name
        self.inputNames = names(repeat each inputs)
        self.outputNames = names(repeat each outputs)
        self.doc = doc
        self.errors = errors
        self.maximumArgumentBytes = maximumArgumentBytes
        description = MemberDescription(kind: .method, interface: interface, name: name, inputs: zipped(inputNames, In.signatures),
                                        outputs: zipped(outputNames, Out.signatures), type: nil, access: .read, changeSignal: .none,
                                        doc: doc, errors: errors, maximumArgumentBytes: maximumArgumentBytes)
    }
}

/// A signal: `SignalSpec<Args<String, Bool>>`.
public struct SignalSpec<Arguments: ArgumentTypes>: MemberSpec {
    public let interface: String
    public let name: String
    public let argumentNames: [String]
    public let doc: String

    /// Made once, with the spec (see `MethodSpec.description`).
    public let description: MemberDescription

    /// Signals of this member, from any sender (narrow it with `sender`, `path`).
    public var matchRule: MatchRule { MatchRule(interface: interface, member: name) }
}

extension SignalSpec {
    public init<each A: DBusRepresentable>(_ interface: String, _ name: String, _ arguments: repeat Arg<each A>, doc: String)
    where Arguments == Args<repeat each A> {
        precondition(Names.isValidMember(name), "invalid signal name '\(name)'")
        self.interface = interface
        self.name = name
        self.argumentNames = names(repeat each arguments)
        self.doc = doc
        description = MemberDescription(kind: .signal, interface: interface, name: name, inputs: zipped(argumentNames, Arguments.signatures),
                                        outputs: [], type: nil, access: .read, changeSignal: .none, doc: doc, errors: [])
    }

}

/// A property of type `T`.
public struct PropertySpec<T: DBusRepresentable>: MemberSpec {
    public let interface: String
    public let name: String
    public let access: Property.Access
    public let changeSignal: Property.ChangeSignal
    public let doc: String

    public init(_ interface: String, _ name: String, _ type: T.Type, access: Property.Access = .read,
                changeSignal: Property.ChangeSignal = .value, doc: String) {
        precondition(Names.isValidMember(name), "invalid property name '\(name)'")
        self.interface = interface
        self.name = name
        self.access = access
        self.changeSignal = changeSignal
        self.doc = doc
    }

    public var description: MemberDescription {
        MemberDescription(kind: .property, interface: interface, name: name, inputs: [], outputs: [], type: T.dbusSignature,
                          access: access, changeSignal: changeSignal, doc: doc, errors: [])
    }
}

/// An interface: its name, what it is for, and its members in the order the XML lists them.
public struct InterfaceSpec: Sendable {
    public let name: String
    public let doc: String
    public let members: [MemberDescription]

    public init(_ name: String, doc: String, members: [any MemberSpec]) {
        precondition(Names.isValidInterface(name), "invalid interface name '\(name)'")
        self.name = name
        self.doc = doc
        self.members = members.map(\.description)
        for member in self.members {
            precondition(member.interface == name, "\(member.interface).\(member.name) is listed under \(name)")
        }
    }
}

// MARK: - Serving a spec

extension Method {
    @usableFromInline
    init(_ description: MemberDescription, handler: @escaping (MethodCall) throws -> MethodReply) {
        self.init(description.name, inputs: description.inputs, outputs: description.outputs,
                  maximumArgumentBytes: description.maximumArgumentBytes, readsItsArguments: true, handler: handler)
    }
}

/// The reply to a call handled later: `send` the declared outputs, or `fail`.
public struct Reply<each O: DBusRepresentable>: Sendable {
    public let call: MethodCall
    init(_ call: MethodCall) { self.call = call }
    public func send(_ values: repeat each O) { call.reply(Args<repeat each O>.encode(repeat each values)) }
    public func fail(_ error: any Error) { call.fail(error) }
}

extension Property {
    /// A read-only property; `get` runs on the connection's queue.
    public init<T: DBusRepresentable>(_ spec: PropertySpec<T>, get: @escaping () throws -> T) {
        self.init(spec.name, T.dbusSignature, changeSignal: spec.changeSignal, set: nil) { try get().dbusValue }
    }

}

extension Signal {
    public init<A>(_ spec: SignalSpec<A>) {
        self.init(spec.name, arguments: spec.description.inputs)
    }
}

extension ExportedObject {
    /// Emits a declared signal, to all or to one destination.
    public func emit<each A: DBusRepresentable>(_ spec: SignalSpec<Args<repeat each A>>, _ values: repeat each A, to destination: String? = nil) throws(DBusError) {
        try emit(spec.name, on: spec.interface, Args<repeat each A>.encode(repeat each values), to: destination)
    }

    /// Emits `PropertiesChanged` for these properties of one interface, with their current values.
    public func propertiesChanged(_ properties: [any PropertyName]) {
        guard let interface = properties.first?.interface else { return }
        propertiesChanged(properties.map(\.name), on: interface)
    }
}

/// A property's interface and name, whatever its type.
public protocol PropertyName: Sendable {
    var interface: String { get }
    var name: String { get }
}
extension PropertySpec: PropertyName {}

// MARK: - Calling through a spec

extension Connection {
    /// Calls a declared method and returns its declared outputs.
    @discardableResult
    public func call<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, destination: String, path: ObjectPath,
        _ arguments: repeat each I, timeout: Duration? = nil
    ) async throws -> (repeat each O) {
        let reply = try await call(destination: destination, path: path, interface: spec.interface, member: spec.name,
                                   Args<repeat each I>.encode(repeat each arguments), timeout: timeout)
        return try Args<repeat each O>.decode(reply, context: "the reply to \(spec.name)")
    }

    /// Calls a declared method; `onReply` gets the decoded results on the connection's queue,
    /// without waiting for a thread of Swift concurrency's pool (see `send(call:timeout:onReply:)`).
    public func call<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, destination: String, path: ObjectPath,
        _ arguments: repeat each I, timeout: Duration? = nil,
        onReply: @escaping @Sendable (Result<(repeat each O), Error>) -> Void
    ) {
        let message: Message
        do {
            message = try Message.methodCall(destination: destination, path: path, interface: spec.interface, member: spec.name,
                                             Args<repeat each I>.encode(repeat each arguments))
        } catch {
            return onReply(.failure(error))
        }
        send(call: message, timeout: timeout) { result in
            onReply(Result { try Args<repeat each O>.decode(try result.get().arguments(), context: "the reply to \(spec.name)") })
        }
    }

    /// Reads a declared property.
    public func get<T: DBusRepresentable>(_ spec: PropertySpec<T>, destination: String, path: ObjectPath) async throws -> T {
        let reply = try await call(destination: destination, path: path, interface: StandardInterfaces.properties, member: "Get",
                                   [.string(spec.interface), .string(spec.name)])
        guard case .variant(let value)? = reply.first else { throw DBusError.invalidArgs("no value for \(spec.name)") }
        return try T(dbusValue: value)
    }

    /// Writes a declared property.
    public func set<T: DBusRepresentable>(_ spec: PropertySpec<T>, destination: String, path: ObjectPath, _ value: T) async throws {
        try await call(destination: destination, path: path, interface: StandardInterfaces.properties, member: "Set",
                       [.string(spec.interface), .string(spec.name), .variant(value.dbusValue)])
    }

    /// Emits a declared signal from `path`, to all or to one destination.
    public func emit<each A: DBusRepresentable>(_ spec: SignalSpec<Args<repeat each A>>, path: ObjectPath, _ values: repeat each A,
                                                destination: String? = nil) throws(DBusError) {
        try emit(path: path, interface: spec.interface, member: spec.name, Args<repeat each A>.encode(repeat each values), destination: destination)
    }
}

// MARK: - Handlers that reach their owner weakly

extension Method {
    /// A handler for a declared method, given its owner while the owner lives. A call that
    /// arrives once the owner is gone (being torn down) gets `gone`. Inlinable: specialized for
    /// the handler's types where it is declared, its arguments and reply are read and made without
    /// a witness call and type metadata for each (callgrind: 2,300 instructions an `Identify`).
    @inlinable
    public init<Owner: AnyObject, each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, owner: Owner, gone: DBusError,
        _ handler: @escaping (Owner, MethodCall, repeat each I) throws -> (repeat each O)
    ) {
        let name = spec.name
        self.init(spec.description) { [weak owner] call in
            guard let owner else { throw gone }
            let inputs = try Args<repeat each I>.read(call, context: name)
            let outputs = try handler(owner, call, repeat each inputs)
            return .values(Args<repeat each O>.encode(repeat each outputs))
        }
    }

    /// As above, for a handler that replies later through `Reply` (from any thread), for work done elsewhere.
    public static func replyingLater<Owner: AnyObject, each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, owner: Owner, gone: DBusError,
        _ handler: @escaping (Owner, Reply<repeat each O>, repeat each I) throws -> Void
    ) -> Method {
        let name = spec.name
        return Method(spec.description) { [weak owner] call in
            guard let owner else { throw gone }
            let inputs = try Args<repeat each I>.read(call, context: name)
            try handler(owner, Reply(call), repeat each inputs)
            return .later
        }
    }
}

extension Property {
    /// A property read from its owner while the owner lives; `set` makes it writable.
    public init<Owner: AnyObject, T: DBusRepresentable>(
        _ spec: PropertySpec<T>, owner: Owner, gone: DBusError, get: @escaping (Owner) throws -> T,
        set: ((Owner, T, MethodCall) throws -> Void)? = nil
    ) {
        let setter: ((DBusValue, MethodCall) throws -> Void)? = set.map { set in
            { [weak owner] value, call in
                guard let owner else { throw gone }
                try set(owner, try T(dbusValue: value), call)
            }
        }
        self.init(spec.name, T.dbusSignature, changeSignal: spec.changeSignal, set: setter) { [weak owner] in
            guard let owner else { throw gone }
            return try get(owner).dbusValue
        }
    }
}
