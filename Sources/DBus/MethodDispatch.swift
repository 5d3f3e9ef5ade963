import Dispatch

/// Routing of incoming method calls to exported objects.
extension Connection {
    /// On the queue: finds the object, interface and method, checks the
    /// signature, and runs the handler. Every failure is an error reply.
    func handleMethodCall(_ message: Message) {
        // Every handler, getter and setter runs here: what they touch is the queue's alone.
        dispatchPrecondition(condition: .onQueue(queue))
        guard let path = message.path, let member = message.member else { return }
        // With an access policy, nothing runs before its sender is known.
        var caller: Caller?
        if callers.policy != nil {
            guard let admitted = admit(message) else { return }
            caller = admitted
            if let refusal = callers.argumentBytes.refusal(of: admitted.account, now: .now) {
                return replyError(to: message, refusal)
            }
            // Before the object is looked up: a caller the policy refuses cannot tell whether it exists.
            var bodyBytes = 0
            let arguments = message.interface == StandardInterfaces.properties
                ? (try? message.arguments(maximumVariantDictionaryEntries: 0, maximumArrayElements: 0, maximumBytes: maximumArgumentBytes,
                                          bodyBytes: &bodyBytes)) ?? [] : []
            if let denial = accessDenial(message, caller: admitted, interface: message.interface ?? "", arguments: arguments) {
                return replyError(to: message, denial)
            }
        }
        let interfaces = interfacesServed(at: path)
        guard !interfaces.isEmpty else {
            return replyError(to: message, DBusError.unknownObject("no object at path \(path)"))
        }
        let method: Method
        let interfaceName: String
        if let requested = message.interface {
            guard let interface = interfaces.first(where: { $0.name == requested }) else {
                return replyError(to: message, DBusError.unknownInterface("object \(path) has no interface '\(requested)'"))
            }
            guard let found = interface.method(member) else {
                return replyError(to: message, DBusError.unknownMethod("interface \(requested) has no method '\(member)'"))
            }
            (method, interfaceName) = (found, requested)
        } else {
            guard let interface = interfaces.first(where: { $0.method(member) != nil }), let found = interface.method(member) else {
                return replyError(to: message, DBusError.unknownMethod("object \(path) has no method '\(member)'"))
            }
            (method, interfaceName) = (found, interface.name)
        }
        let signature = message.signature
        if signature != method.inputSignature {
            let shortName = "\(interfaceName.split(separator: ".").last ?? "").\(member)"
            return replyError(to: message, Self.signatureMismatch(method: method, shortName: shortName, actual: signature))
        }
        let call: MethodCall
        var bodyBytes = 0
        do {
            let arguments = try message.arguments(maximumVariantDictionaryEntries: maximumVariantDictionaryEntries, maximumArrayElements: maximumArrayElements,
                                                  maximumBytes: method.maximumArgumentBytes ?? maximumArgumentBytes, bodyBytes: &bodyBytes)
            if let caller { callers.argumentBytes.charge(caller.account, bodyBytes, now: .now) }
            call = MethodCall(message: message, arguments: arguments, interface: interfaceName, method: method, caller: caller, connection: self)
        } catch {
            if let caller { callers.argumentBytes.charge(caller.account, bodyBytes, now: .now) }
            return replyError(to: message, DBusError(error))
        }
        if let denial = accessDenial(message, caller: caller, interface: interfaceName, arguments: call.arguments) {
            return call.fail(denial)
        }
        do {
            switch try method.handler(call) {
            case .values(let values): call.reply(values)
            case .later: break
            }
        } catch {
            call.fail(error)
        }
    }

    /// The interfaces reachable at `path`: the object's own and the standard
    /// ones, or only Introspectable and Peer for a node that merely has children.
    private func interfacesServed(at path: ObjectPath) -> [Interface] {
        if let object = objects.objects[path] {
            let isManager = objects.managers.contains(path)
            if let cached = object.served, cached.isManager == isManager { return cached.interfaces }
            // Built once per object (and again only if it becomes an object manager): calls are the hot path.
            var interfaces = object.interfaces
            interfaces.append(StandardInterfaces.introspectable { [weak self] call in self?.introspectionXML(at: path, for: call) ?? "" })
            interfaces.append(StandardInterfaces.peerInterface)
            interfaces.append(StandardInterfaces.properties(of: object))
            if isManager {
                interfaces.append(StandardInterfaces.objectManager(at: path, tree: { [weak self] in self?.objects ?? ObjectTree() },
                                                                   reveals: { [weak self] path, call in self?.reveals(path, to: call) ?? true }))
            }
            object.served = (isManager, interfaces)
            return interfaces
        }
        let introspect = StandardInterfaces.introspectable { [weak self] call in self?.introspectionXML(at: path, for: call) ?? "" }
        if path == .root || objects.hasDescendants(path) {
            return [introspect, StandardInterfaces.peerInterface]
        }
        return []
    }

    func introspectionXML(at path: ObjectPath, for call: MethodCall? = nil) -> String {
        let served = interfacesServed(at: path)
        return Introspection.document(interfaces: served.filter { $0.name != StandardInterfaces.introspectable } + served.filter { $0.name == StandardInterfaces.introspectable },
                                      children: children(of: path, visibleTo: call?.caller))
    }

    /// The nodes below `path` that lead to an object `caller` may see: the service's own objects
    /// (no owner) and those the access policy reveals to it. Another app's call is not even a name.
    private func children(of path: ObjectPath, visibleTo caller: Caller?) -> [String] {
        guard let caller, caller.identity.isSandboxed, let policy = callers.policy else { return objects.children(of: path) }
        var names = Set<String>()
        let depth = path.elements.count
        for (candidate, object) in objects.objects where candidate.isDescendant(of: path)
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
        guard message.expectsReply, let reply = message.makeErrorReply(error) else { return }
        send(reply)
    }
}
