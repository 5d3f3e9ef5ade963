/// Introspection XML generated from interface declarations.
enum Introspection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    static func document(interfaces: [Interface], children: [String]) -> String {
        var xml = doctype + "\n<node>\n"
        for interface in interfaces { xml += self.xml(for: interface) }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// A served interface: the same elements as the API's generated XML (`IntrospectionXML`), without doc comments.
    static func xml(for interface: Interface) -> String {
        var xml = "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            xml += IntrospectionXML.element(MemberDescription(kind: .method, interface: interface.name, name: method.name, inputs: method.inputs,
                                                              outputs: method.outputs, type: nil, access: .read, changeSignal: .none, doc: "", errors: []))
        }
        for signal in interface.signals {
            xml += IntrospectionXML.element(MemberDescription(kind: .signal, interface: interface.name, name: signal.name, inputs: signal.arguments,
                                                              outputs: [], type: nil, access: .read, changeSignal: .none, doc: "", errors: []))
        }
        for property in interface.properties {
            xml += IntrospectionXML.element(MemberDescription(kind: .property, interface: interface.name, name: property.name, inputs: [], outputs: [],
                                                              type: property.signature, access: property.access, changeSignal: property.changeSignal,
                                                              doc: "", errors: []))
        }
        return xml + "  </interface>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
