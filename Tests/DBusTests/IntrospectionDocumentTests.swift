@testable import DBusTestSupport
import Foundation
import Testing

@Suite("Reading introspection XML and comparing interfaces")
struct IntrospectionDocumentTests {
    typealias Method = IntrospectionDocument.MethodShape
    typealias Property = IntrospectionDocument.PropertyShape

    /// dbus/org.monkeycall.Telephony1.xml, found from this file: Tests/DBusTests/ → the repository root.
    static let contractURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dbus/org.monkeycall.Telephony1.xml")

    @Test func readsTheContract() throws {
        let document = try IntrospectionDocument(xml: String(contentsOf: Self.contractURL, encoding: .utf8))
        let prefix = "org.monkeycall.Telephony1."
        #expect(Set(document.interfaces.keys) == Set(
            ["Manager", "CallController", "Provider", "Call", "CallDirectoryUpdate", "CallDirectory", "Recents", "Favorites", "AddressBook"]
                .map { prefix + $0 }))

        let book = try #require(document.interfaces[prefix + "AddressBook"])
        #expect(book.methods["Search"] == Method(in: ["s", "u"], out: ["aa{sv}"]))
        #expect(book.properties["Count"] == Property(type: "u", access: "read"))
        #expect(book.signals["Changed"] == [])

        let manager = try #require(document.interfaces[prefix + "Manager"])
        #expect(manager.methods["RegisterProvider"] == Method(in: ["a{sv}"], out: ["o"]))
        #expect(manager.properties["DoNotDisturb"] == Property(type: "b", access: "readwrite"))
        #expect(manager.properties["Version"] == Property(type: "s", access: "read"))

        let provider = try #require(document.interfaces[prefix + "Provider"])
        #expect(provider.signals["PerformAction"] == ["s", "s", "s", "a{sv}"])

        let controller = try #require(document.interfaces[prefix + "CallController"])
        #expect(controller.methods["StartCall"] == Method(in: ["s", "a{sv}"], out: ["s", "s"]))
        #expect(controller.methods["RequestTransaction"] == Method(in: ["a(sa{sv})"], out: ["s"]))

        // A method written as <method name="Complete"/>, with no arguments.
        #expect(document.interfaces[prefix + "CallDirectoryUpdate"]?.methods["Complete"] == Method(in: [], out: []))
    }

    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <!-- A comment with <b>markup</b> in it,
             over <several> lines, and a > on its own. -->
        <node name='/org/example/Sample'>
          <interface name='org.example.Tom&amp;Jerry&lt;&gt;&quot;&apos;&#65;'>
            <method name="Echo">
              <!-- <arg name="ignored" type="x" direction="in"/> -->
              <annotation name="org.freedesktop.DBus.Deprecated" value="true"/>
              <arg name='text' type='s'/>
              <arg name="count" type="u" direction='in' />
              <arg name="echoed" type="as" direction="out"/>
            </method>
            <method name="Nothing"/>
            <signal name="Said">
              <arg name="what" type="s"/>
              <arg name="where" type="a{sv}"/>
            </signal>
            <property name="Volume" type="i" access="readwrite">
              <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="true"/>
            </property>
            <doc:doc><doc:summary>Unknown elements <em>are</em> ignored.</doc:summary></doc:doc>
          </interface>
          <interface
              name="org.example.Quiet"
              ></interface>
          <node name="child">
            <interface name="org.example.Hidden">
              <method name="Secret"/>
              <node name="grandchild"><interface name="org.example.Deeper"/></node>
            </interface>
          </node>
          <node name="leaf"/>
        </node>
        """

    @Test func readsCommentsQuotesEntitiesAndNestedNodes() throws {
        let document = try IntrospectionDocument(xml: Self.sample)
        let name = "org.example.Tom&Jerry<>\"'A"
        #expect(Set(document.interfaces.keys) == [name, "org.example.Quiet"])

        let sample = try #require(document.interfaces[name])
        #expect(sample.methods == ["Echo": Method(in: ["s", "u"], out: ["as"]), "Nothing": Method(in: [], out: [])])
        #expect(sample.signals == ["Said": ["s", "a{sv}"]])
        #expect(sample.properties == ["Volume": Property(type: "i", access: "readwrite")])
        #expect(sample.members.map(\.description) == [
            "method Echo in (su) out (as)",
            "method Nothing in () out ()",
            "signal Said (sa{sv})",
            "property Volume i readwrite",
        ])
        #expect(document.interfaces["org.example.Quiet"] == IntrospectionDocument.InterfaceShape())
    }

    @Test(arguments: [
        ("<node><!-- never closed </node>", 1),
        ("<node>\n  <interface name='a'>\n</node>", 3),
        ("<node>\n  <interface name='a'>", 2),
        ("<node><interface/></node>", 1),
        ("<node><interface name='a'><method name='M'><arg type='s' direction='sideways'/></method></interface></node>", 1),
        ("<node><interface name='a'><property name='P' type='s' access='read'/><method name='P'/></interface></node>", 1),
        ("<node>\n<interface name='a&bogus;'/></node>", 2),
        ("<node name='unterminated/></node>", 1),
        ("<interface name='a'/>", 1),
        ("", 1),
    ])
    func refusesBrokenDocuments(xml: String, line: Int) {
        let error = #expect(throws: IntrospectionDocument.ParseError.self) { try IntrospectionDocument(xml: xml) }
        #expect(error?.line == line, "\(String(describing: error))")
    }

    @Test func reportsDifferencesBothWays() throws {
        let here = try IntrospectionDocument(xml: """
            <node>
              <interface name="org.x.Y">
                <method name="Foo"><arg type="s" direction="in"/></method>
                <method name="Gone"/>
                <signal name="Bar"><arg type="s"/></signal>
                <property name="Level" type="u" access="read"/>
              </interface>
              <interface name="org.x.Same"><method name="Ping"/></interface>
              <interface name="org.x.OnlyHere"/>
            </node>
            """)
        let there = try IntrospectionDocument(xml: """
            <node>
              <interface name="org.x.Y">
                <method name="Foo"><arg type="i" direction="in"/></method>
                <signal name="Bar"><arg type="s"/></signal>
                <property name="Level" type="u" access="readwrite"/>
                <property name="New" type="b" access="read"/>
              </interface>
              <interface name="org.x.Same"><method name="Ping"/></interface>
            </node>
            """)
        #expect(here.differences(from: there, interfaces: ["org.x.Y", "org.x.Same", "org.x.OnlyHere"]) == [
            "org.x.Y: method Foo in (s) out () here, in (i) out () there",
            "org.x.Y: method Gone missing there",
            "org.x.Y: property Level u read here, u readwrite there",
            "org.x.Y: property New missing here",
            "org.x.OnlyHere: interface missing there",
        ])
        #expect(there.differences(from: here, interfaces: ["org.x.Y"]).contains("org.x.Y: method Gone missing here"))
        #expect(here.differences(from: there, interfaces: ["org.x.Same"]).isEmpty)
        #expect(here.differences(from: here, interfaces: Array(here.interfaces.keys)).isEmpty)
    }
}
