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

    static func xml(for interface: Interface) -> String {
        var xml = "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            xml += "    <method name=\"\(method.name)\">\n"
            for arg in method.inputs { xml += "      <arg name=\"\(arg.name)\" type=\"\(escape(arg.signature.rawValue))\" direction=\"in\"/>\n" }
            for arg in method.outputs { xml += "      <arg name=\"\(arg.name)\" type=\"\(escape(arg.signature.rawValue))\" direction=\"out\"/>\n" }
            xml += "    </method>\n"
        }
        for signal in interface.signals {
            xml += "    <signal name=\"\(signal.name)\">\n"
            for arg in signal.arguments { xml += "      <arg name=\"\(arg.name)\" type=\"\(escape(arg.signature.rawValue))\"/>\n" }
            xml += "    </signal>\n"
        }
        for property in interface.properties {
            xml += "    <property name=\"\(property.name)\" type=\"\(escape(property.signature.rawValue))\" access=\"\(property.access.rawValue)\""
            switch property.changeSignal {
            case .value: xml += "/>\n"
            case .invalidates:
                xml += ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"invalidates\"/>\n    </property>\n"
            case .none:
                xml += ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"false\"/>\n    </property>\n"
            }
        }
        return xml + "  </interface>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
