import DBus
import MonkeyCallAPI

// Prints the API's introspection XML, made from the specs in MonkeyCallAPI.
// `scripts/generate-api-xml` writes it to dbus/org.monkeycall.Telephony1.xml;
// a test fails when the committed file differs.
print(Telephony1.introspectionXML, terminator: "")
