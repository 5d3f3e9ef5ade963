/// The introspection XML of a whole API, made from its specs, documentation
/// included: each interface and member is preceded by a comment with its doc
/// text, and each method lists the errors it may return, in its doc comment and
/// in an `org.freedesktop.DBus.Errors`-style annotation (`errorAnnotation`).
public enum IntrospectionXML {
    /// The annotation that lists a method's error names, space-separated.
    public static let errorAnnotation = "org.monkeycall.DBus.Errors"

    public static func document(header: String, interfaces: [InterfaceSpec]) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" "
        xml += "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
        xml += comment(header, indent: "")
        xml += "<node>\n"
        for interface in interfaces {
            xml += "\n" + comment(interface.doc, indent: "  ")
            xml += "  <interface name=\"\(Introspection.escape(interface.name))\">\n"
            for member in interface.members {
                xml += "\n" + comment(doc(of: member), indent: "    ")
                xml += element(member)
            }
            xml += "\n  </interface>\n"
        }
        return xml + "\n</node>\n"
    }

    static func doc(of member: MemberDescription) -> String {
        var text = member.name + ": " + member.doc
        if !member.errors.isEmpty { text += "\nErrors:" + member.errors.map { "\n  " + $0 }.joined() }
        return text
    }

    static func element(_ member: MemberDescription) -> String {
        let name = Introspection.escape(member.name)
        func arg(_ argument: NamedArgument, _ direction: String?) -> String {
            let direction = direction.map { " direction=\"\($0)\"" } ?? ""
            return "      <arg name=\"\(Introspection.escape(argument.name))\" type=\"\(Introspection.escape(argument.signature.rawValue))\"\(direction)/>\n"
        }
        switch member.kind {
        case .method:
            var xml = "    <method name=\"\(name)\">\n"
            for argument in member.inputs { xml += arg(argument, "in") }
            for argument in member.outputs { xml += arg(argument, "out") }
            if !member.errors.isEmpty {
                xml += "      <annotation name=\"\(errorAnnotation)\" value=\"\(Introspection.escape(member.errors.joined(separator: " ")))\"/>\n"
            }
            return xml + "    </method>\n"
        case .signal:
            guard !member.inputs.isEmpty else { return "    <signal name=\"\(name)\"/>\n" }
            var xml = "    <signal name=\"\(name)\">\n"
            for argument in member.inputs { xml += arg(argument, nil) }
            return xml + "    </signal>\n"
        case .property:
            let type = Introspection.escape(member.type?.rawValue ?? "v")
            let open = "    <property name=\"\(name)\" type=\"\(type)\" access=\"\(member.access.rawValue)\""
            switch member.changeSignal {
            case .value: return open + "/>\n"
            case .invalidates:
                return open + ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"invalidates\"/>\n    </property>\n"
            case .none:
                return open + ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"false\"/>\n    </property>\n"
            }
        }
    }

    /// An XML comment holding `text`, one line per line, indented. A comment may not contain `--`
    /// (XML 1.0 §2.5): doc text that does is a programming error, caught when the XML is made.
    static func comment(_ text: String, indent: String) -> String {
        precondition(!text.contains("--") && !text.hasSuffix("-"), "doc text may not contain '--' or end with '-' (XML comments): \(text.prefix(80))")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.count == 1 && text.count + indent.count < 72 { return "\(indent)<!-- \(text) -->\n" }
        var xml = "\(indent)<!--\n"
        for line in lines { xml += line.isEmpty ? "\n" : "\(indent)  \(line)\n" }
        return xml + "\(indent)-->\n"
    }
}
