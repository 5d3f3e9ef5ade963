internal import CDBus
import Dispatch
import Glibc

/// Routing of incoming method calls to exported objects.
extension ObjectServer {
    /// On the queue: finds the object, interface and method, checks the
    /// signature, and runs the handler. Every failure is an error reply.
    func handleMethodCall(_ message: Message) {
        // Every handler, getter and setter runs here: what they touch is the queue's alone.
        dispatchPrecondition(condition: .onQueue(connection.queue))
        // The header's fields, each read from libdbus once. The path is the last call's String when
        // it is the same, and the interface is the name of the interface it finds (or made into a
        // String only when there is none): each read made a String, a path or an interface name
        // on the heap, and each comparison with another String compared the bytes again.
        guard let path = message.path(reusing: state.lastPath), let member = message.member else { return }
        state.lastPath = path
        let requested = dbus_message_get_interface(message.pointer)
        let signature = message.signature
        // With an access policy, nothing runs before its sender is known.
        var caller: Caller?
        if state.callers.policy != nil {
            guard let admitted = admit(message) else { return }
            if let refusal = state.callers.argumentBytes.refusal(of: admitted.account, now: .now) {
                return replyError(to: message, refusal)
            }
            caller = admitted
        }
        // Found first, answered only after the policy's check: a caller the policy refuses cannot
        // tell whether an object, interface or method exists.
        let target = Self.target(of: member, requested: requested, among: interfacesServed(at: path), at: path)
        let interfaceName: String
        switch target {
        case .success(let found): interfaceName = found.interface
        case .failure: interfaceName = requested.map { String(cString: $0) } ?? ""
        }
        var decoded: [DBusValue]?
        if let caller {
            // Properties calls are checked with the property they name: their arguments are read
            // first (bounded as any call's), once.
            if interfaceName == StandardInterfaces.properties, case .success(let found) = target, signature == found.method.inputSignature {
                switch decode(message, signature: signature, for: found.method, caller: caller) {
                case .success(let values): decoded = values
                case .failure(let error): return replyError(to: message, error)
                }
            }
            if let denial = accessDenial(caller: caller, path: path, interface: interfaceName, member: member, arguments: decoded ?? []) {
                return replyError(to: message, denial)
            }
        }
        let method: Method
        switch target {
        case .success(let found): method = found.method
        case .failure(let error): return replyError(to: message, error)
        }
        if signature != method.inputSignature {
            let shortName = "\(interfaceName.split(separator: ".").last ?? "").\(member)"
            return replyError(to: message, Self.signatureMismatch(method: method, shortName: shortName, actual: signature))
        }
        let call: MethodCall
        let handlerReads = decoded == nil && method.readsItsArguments
        if handlerReads {
            // A spec's handler reads its arguments off the wire itself, into their Swift types, within these bounds.
            let wireRead = MethodCall.WireRead(signature: signature, maximumVariantDictionaryEntries: state.maximumVariantDictionaryEntries,
                                               maximumArrayElements: state.maximumArrayElements,
                                               maximumBytes: method.maximumArgumentBytes ?? state.maximumArgumentBytes)
            call = MethodCall(message: message, arguments: [], wireRead: wireRead, interface: interfaceName, method: method, caller: caller,
                              connection: connection)
        } else {
            let arguments: [DBusValue]
            if let decoded {
                arguments = decoded
            } else {
                switch decode(message, signature: signature, for: method, caller: caller) {
                case .success(let values): arguments = values
                case .failure(let error): return replyError(to: message, error)
                }
            }
            call = MethodCall(message: message, arguments: arguments, interface: interfaceName, method: method, caller: caller, connection: connection)
        }
        // What the handler read is charged to its caller (`decode` charges what the server read).
        defer { if let caller, handlerReads { state.callers.argumentBytes.charge(caller.account, call.bodyBytes.load(ordering: .relaxed), now: .now) } }
        do {
            switch try method.handler(call) {
            case .values(let values): call.reply(values)
            case .later: break
            }
        } catch {
            call.fail(error)
        }
    }

    /// The policy's verdict on a call to `member` found at `path`, its one check of the message; nil when allowed.
    private func accessDenial(caller: Caller, path: ObjectPath, interface: String, member: String, arguments: [DBusValue]) -> DBusError? {
        guard let policy = state.callers.policy else { return nil }
        var propertyInterface: String?
        var property: String?
        if interface == StandardInterfaces.properties {
            if case .string(let name)? = arguments.first { propertyInterface = name }
            if arguments.count > 1, case .string(let name) = arguments[1] { property = name }
        }
        return policy.check(AccessRequest(caller: caller, path: path, interface: interface, member: member,
                                          propertyInterface: propertyInterface, property: property))
    }

    /// The method `member` names at `path`, in the interface requested (or the first that has it);
    /// else the error that says what is missing.
    /// `requested`: the message's interface field; `interface` is then the name of the one found.
    private static func target(of member: String, requested: UnsafePointer<CChar>?, among interfaces: [Interface], at path: ObjectPath)
    -> Result<(method: Method, interface: String), DBusError> {
        guard !interfaces.isEmpty else { return .failure(DBusError.unknownObject("no object at path \(path)")) }
        if let requested {
            let length = strlen(requested)
            guard let interface = interfaces.first(where: { $0.name.utf8.count == length && $0.name.equals(cString: requested, length: length) }) else {
                return .failure(DBusError.unknownInterface("object \(path) has no interface '\(String(cString: requested))'"))
            }
            guard let found = interface.method(member) else {
                return .failure(DBusError.unknownMethod("interface \(interface.name) has no method '\(member)'"))
            }
            return .success((found, interface.name))
        }
        guard let interface = interfaces.first(where: { $0.method(member) != nil }), let found = interface.method(member) else {
            return .failure(DBusError.unknownMethod("object \(path) has no method '\(member)'"))
        }
        return .success((found, interface.name))
    }

    /// The arguments of `message` for `method`, within the connection's bounds (and the method's
    /// own bound on bytes), refused from the header when too big; charged to the caller's account.
    private func decode(_ message: Message, signature: Signature, for method: Method, caller: Caller?) -> Result<[DBusValue], DBusError> {
        var bodyBytes = 0
        defer { if let caller { state.callers.argumentBytes.charge(caller.account, bodyBytes, now: .now) } }
        do {
            return .success(try message.arguments(signature: signature, maximumVariantDictionaryEntries: state.maximumVariantDictionaryEntries,
                                                  maximumArrayElements: state.maximumArrayElements,
                                                  maximumBytes: method.maximumArgumentBytes ?? state.maximumArgumentBytes, bodyBytes: &bodyBytes))
        } catch {
            return .failure(DBusError(error))
        }
    }

    /// The interfaces reachable at `path`: the object's own and the standard
    /// ones, or only Introspectable and Peer for a node that merely has children.
    private func interfacesServed(at path: ObjectPath) -> [Interface] {
        // Built once per object (and again only if it becomes an object manager): calls are the hot
        // path, and a cached entry is found with one lookup (`ObjectTree.served` says when it goes).
        if let last = state.objects.lastServed, last.path == path { return last.interfaces }
        if let cached = state.objects.served[path] {
            state.objects.lastServed = (path, cached)
            return cached
        }
        if let object = state.objects.objects[path] {
            let isManager = state.objects.managers.contains(path)
            var interfaces = object.interfaces
            interfaces.append(StandardInterfaces.introspectable { [weak self] call in self?.introspectionXML(at: path, for: call) ?? "" })
            interfaces.append(StandardInterfaces.peerInterface)
            interfaces.append(StandardInterfaces.properties(of: object))
            if isManager {
                interfaces.append(StandardInterfaces.objectManager(at: path, tree: { [weak self] in self?.state.objects ?? ObjectTree() },
                                                                   reveals: { [weak self] path, call in self?.reveals(path, to: call) ?? true }))
            }
            state.objects.served[path] = interfaces
            return interfaces
        }
        let introspect = StandardInterfaces.introspectable { [weak self] call in self?.introspectionXML(at: path, for: call) ?? "" }
        if path == .root || state.objects.hasDescendants(path) {
            return [introspect, StandardInterfaces.peerInterface]
        }
        return []
    }

    func introspectionXML(at path: ObjectPath, for call: MethodCall? = nil) -> String {
        let served = interfacesServed(at: path)
        return Introspection.document(interfaces: served.filter { $0.name != StandardInterfaces.introspectable } + served.filter { $0.name == StandardInterfaces.introspectable },
                                      children: children(of: path, visibleTo: call?.caller))
    }

    /// The nodes below `path` that lead to an object `caller` may see: the server's own objects
    /// (no owner) and those the access policy reveals to it. An object it may not see is not even a name.
    private func children(of path: ObjectPath, visibleTo caller: Caller?) -> [String] {
        guard let caller, let policy = state.callers.policy else { return state.objects.children(of: path) }
        var names = Set<String>()
        let depth = path.elements.count
        for (candidate, object) in state.objects.objects where candidate.isDescendant(of: path)
        && (object.owner == nil || policy.reveals(candidate, to: caller)) {
            names.insert(String(candidate.elements[depth]))
        }
        return names.sorted()
    }

    /// An `InvalidArgs` error naming the first argument that does not fit.
    static func signatureMismatch(method: Method, shortName: String, actual: Signature) -> DBusError {
        let expected = method.inputs
        let got = actual.completeTypes
        let wanted = "(" + expected.map { "\($0.signature) \($0.name)" }.joined(separator: ", ") + ")"
        for (index, argument) in expected.enumerated() {
            guard index < got.count else {
                return DBusError.invalidArgs("\(shortName) expects \(wanted): argument \(index + 1) '\(argument.name)' of type '\(argument.signature)' is missing")
            }
            if got[index] != argument.signature {
                return DBusError.invalidArgs("\(shortName) expects \(wanted): argument \(index + 1) '\(argument.name)' must be of type '\(argument.signature)', got '\(got[index])'")
            }
        }
        return DBusError.invalidArgs("\(shortName) expects \(wanted), got \(got.count) arguments of type '\(actual)'")
    }

    func replyError(to message: Message, _ error: DBusError) {
        connection.replyError(to: message, error)
    }
}

extension String {
    /// Whether this is the text of `cString` (of `length` bytes: `strlen`), compared without making a String of it.
    func equals(cString: UnsafePointer<CChar>, length: Int) -> Bool {
        var text = self
        return text.withUTF8 { utf8 in
            length == utf8.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, cString, utf8.count) == 0)
        }
    }
}
