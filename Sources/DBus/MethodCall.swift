import Synchronization

/// An incoming method call being handled. Reply exactly once, now (by returning
/// `.values` from the handler) or later (return `.later`, then call `reply` or
/// `fail` from anywhere). A call released without a reply gets a `Failed` error.
public final class MethodCall: Sendable {
    public let message: Message
    /// The arguments as the server read them, for a method declared without a spec
    /// (`Method(_:in:out:handler:)`). A spec's handler reads its own off the wire, straight into
    /// their Swift types (`Args.read`), and finds this empty.
    public let arguments: [DBusValue]
    /// How `Args.read` reads the arguments: the bounds the server set, or nil for `arguments`.
    private let wireRead: WireRead?
    /// The body's size on the wire, once `Args.read` has read it: what the server charges the caller.
    let bodyBytes = Atomic<Int>(0)
    private let interfaceName: String
    let outputs: [NamedArgument]
    private let outputSignature: Signature
    private let connection: Connection
    /// Whether a reply (or an error) has been claimed; replies may come from any thread.
    private let replied = Atomic<Bool>(false)

    /// Who called, when the connection has an access policy (which identifies every caller).
    public let caller: Caller?

    /// `wireRead`: for a spec's handler, which reads its arguments itself (`arguments` is then empty).
    init(message: Message, arguments: [DBusValue], wireRead: WireRead? = nil, interface: String, method: Method, caller: Caller? = nil,
         connection: Connection) {
        self.message = message
        self.caller = caller
        self.arguments = arguments
        self.wireRead = wireRead
        self.interfaceName = interface
        self.outputs = method.outputs
        self.outputSignature = method.outputSignature
        self.connection = connection
    }

    /// `Interface.Member` (the interface's last element), for error messages.
    public var name: String { "\(interfaceName.split(separator: ".").last ?? "").\(message.member ?? "")" }

    deinit {
        if !replied.load(ordering: .acquiring) { sendError(DBusError.failed("\(name) ended without a reply")) }
    }

    /// Set by a property setter that answers later (when a write is done), with
    /// `reply` or `fail`: `Properties.Set` then leaves the reply to it.
    public var repliesLater: Bool { answersLater.load(ordering: .acquiring) }
    public func replyLater() { answersLater.store(true, ordering: .releasing) }
    private let answersLater = Atomic<Bool>(false)

    /// The unique bus name of the caller.
    public var sender: String { message.sender ?? "" }

    /// The arguments as Swift types; the signature was checked before the handler ran.
    public func decode<each T: DBusRepresentable>(_ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        try Args<repeat each T>.decode(arguments, context: name)
    }

    /// What the server bounds a body read off the wire by (`ObjectServer.limitVariantDictionaries`, ...).
    struct WireRead: Sendable {
        let signature: Signature
        let maximumVariantDictionaryEntries: Int
        let maximumArrayElements: Int
        let maximumBytes: Int
    }

    /// Gives `read` the arguments one at a time: off the wire, or from `arguments` when the server
    /// read them (or when a value is a unix fd, which only libdbus' iterators read: `read` then runs
    /// again, on those). Errors say what is wrong with the body. Not generic: `read` keeps what it
    /// makes, so no type metadata is made for a call's argument types.
    @usableFromInline
    func withArguments(_ read: (inout ArgumentReader) throws(DBusError) -> Void) throws(DBusError) {
        // A spec's handler of a method without arguments reads the empty `arguments`.
        guard let wireRead, !wireRead.signature.rawValue.isEmpty else {
            var reader = ArgumentReader(values: arguments)
            return try read(&reader)
        }
        var bytes = 0
        defer { bodyBytes.store(bytes, ordering: .relaxed) }
        let readOffWire = try message.withWireBody(signature: wireRead.signature.rawValue,
                                                   maximumVariantDictionaryEntries: wireRead.maximumVariantDictionaryEntries,
                                                   maximumArrayElements: wireRead.maximumArrayElements, maximumBytes: wireRead.maximumBytes,
                                                   bodyBytes: &bytes) { (wire: inout WireReader) throws(WireFailure) -> Bool in
            var reader = ArgumentReader(wire: wire)
            do throws(DBusError) {
                try read(&reader)
                return true
            } catch {
                if reader.metUnixFD { return false }
                throw .invalid(error)
            }
        }
        // nil, or false: a unix fd, at the top level or in a variant. The body's size was checked already.
        if readOffWire == true { return }
        var reader = ArgumentReader(values: try message.argumentsWithUnixFDs(maximumVariantDictionaryEntries: wireRead.maximumVariantDictionaryEntries))
        try read(&reader)
    }

    /// Sends the reply. The values must match the method's declared outputs.
    public func reply(_ values: [DBusValue] = []) {
        guard values.count == outputs.count, zip(values, outputs).allSatisfy({ $0.signatureString == $1.signature.rawValue }) else {
            let signature = Signature(concatenating: values.map(\.signature))
            return fail(DBusError.failed("\(name) produced a reply of type '\(signature)' instead of '\(outputSignature)'"))
        }
        guard claimReply(), message.expectsReply else { return }
        do {
            connection.send(try message.makeReply(values))
        } catch {
            sendError(DBusError(error))
        }
    }

    /// Sends the reply for a method whose one output is `aa{sv}`: the records, written straight to
    /// the wire (no `DBusValue` is built for them; the bytes are those `reply([records.dbusValue])` sends).
    public func reply<R: VarDictRecord>(records: [R]) {
        do {
            reply(records: try EncodedRecords(records))
        } catch {
            fail(error)
        }
    }

    /// The same with the records written before: for the same records sent again.
    public func reply<R: VarDictRecord>(records: EncodedRecords<R>) {
        guard outputs.count == 1, outputs[0].signature.rawValue == "aa{sv}" else {
            return fail(DBusError.failed("\(name) produced a reply of type 'aa{sv}' instead of '\(outputSignature)'"))
        }
        guard claimReply(), message.expectsReply else { return }
        do {
            connection.send(try message.makeReply(records: records))
        } catch {
            sendError(DBusError(error))
        }
    }

    /// Sends an error reply; D-Bus-convertible errors keep their names.
    public func fail(_ error: any Error) {
        guard claimReply() else { return }
        sendError(DBusError(error))
    }

    /// True for the first reply or error only. Without a hop to the queue: a reply sent from
    /// another thread (a database's, with a large result) is encoded there.
    private func claimReply() -> Bool {
        !replied.exchange(true, ordering: .acquiringAndReleasing)
    }

    private func sendError(_ error: DBusError) {
        guard message.expectsReply, let reply = message.makeErrorReply(error) else { return }
        connection.send(reply)
    }
}

/// A call's arguments, one at a time and in order (`MethodCall.withArguments`): what `Args.read`
/// makes its Swift types of.
@usableFromInline
struct ArgumentReader {
    private var wire: WireReader?
    private let values: [DBusValue]
    private var index = 0
    /// Whether the wire held a unix fd, which only libdbus' iterators read.
    private(set) var metUnixFD = false

    init(wire: WireReader) {
        self.wire = wire
        values = []
    }

    @usableFromInline
    init(values: [DBusValue]) {
        self.values = values
    }

    /// The next argument; nil past the last.
    @usableFromInline
    mutating func next() throws(DBusError) -> DBusValue? {
        guard wire != nil else {
            defer { index += 1 }
            return index < values.count ? values[index] : nil
        }
        do throws(WireFailure) {
            return try wire!.next()
        } catch {
            switch error {
            case .invalid(let problem): throw problem
            case .unsupported:
                metUnixFD = true
                throw DBusError.invalidArgs("a unix fd")
            }
        }
    }
}
