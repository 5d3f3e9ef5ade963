/// A match rule (`type='signal',interface='…'`): what the bus should route to
/// us, and what a subscription handler wants to see.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    public var type: MessageType? = .signal
    /// A unique name; well-known names are resolved by the bus only, so they are not checked locally.
    public var sender: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    public var interface: String?
    public var member: String?
    /// arg0 must equal this string.
    public var arg0: String?

    public init(type: MessageType? = .signal, sender: String? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
                interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.type = type
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in the bus's text form.
    public var description: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='\(value.replacing("'", with: "'\\''"))'")
        }
        switch type {
        case .signal?: add("type", "signal")
        case .methodCall?: add("type", "method_call")
        case .methodReturn?: add("type", "method_return")
        case .error?: add("type", "error")
        default: break
        }
        add("sender", sender)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether `message` fits the rule, as far as it can be checked locally.
    public func matches(_ message: Message) -> Bool {
        if let type, message.type != type { return false }
        if let sender, sender.hasPrefix(":"), message.sender != sender { return false }
        if let path, message.path != path { return false }
        if let pathNamespace, let messagePath = message.path,
           messagePath != pathNamespace, !messagePath.isDescendant(of: pathNamespace) { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let arg0 {
            guard case .string(let first)? = try? message.arguments().first, first == arg0 else { return false }
        }
        return true
    }
}
