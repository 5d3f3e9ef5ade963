/// The interfaces every object has (`Introspectable`, `Peer`, `Properties`) and
/// `ObjectManager`, declared like any other interface so that dispatch, signature
/// checks and introspection treat them the same way.
enum StandardInterfaces {
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"

    /// `xml`: the document for the caller of the call (its child nodes are the ones it may see).
    static func introspectable(_ xml: @escaping (MethodCall) -> String) -> Interface {
        Interface(introspectable) {
            Method("Introspect", out: ["xml_data": "s"]) { call in .values([.string(xml(call))]) }
        }
    }

    /// Declared for introspection; libdbus answers Peer calls itself before our filter sees them.
    static var peerInterface: Interface {
        Interface(peer) {
        Method("Ping") { _ in .empty }
        Method("GetMachineId", out: ["machine_uuid": "s"]) { _ in .values([.string("")]) }
        }
    }

    /// Holds the object weakly: the object caches its standard interfaces.
    static func properties(of object: ExportedObject) -> Interface {
        let path = object.path
        weak let object = object
        func find(_ call: MethodCall, _ interfaceName: String) throws -> Interface {
            guard let object else { throw DBusError.unknownObject("the object is gone") }
            guard let interface = object.interface(interfaceName) else {
                throw DBusError.unknownInterface("object \(object.path) has no interface '\(interfaceName)'")
            }
            return interface
        }
        func findProperty(_ call: MethodCall, _ interfaceName: String, _ name: String) throws -> Property {
            guard let property = try find(call, interfaceName).property(name) else {
                throw DBusError.unknownProperty("interface \(interfaceName) has no property '\(name)'")
            }
            return property
        }
        return Interface(properties) {
            Method("Get", in: ["interface_name": "s", "property_name": "s"], out: ["value": "v"]) { call in
                // The two strings read as they are (the signature was checked): `decode`, generic over
                // its parameter pack, cost 390 instructions a Get.
                let interfaceName: String, name: String
                if call.arguments.count == 2, case .string(let first) = call.arguments[0], case .string(let second) = call.arguments[1] {
                    (interfaceName, name) = (first, second)
                } else {
                    (interfaceName, name) = try call.decode(String.self, String.self)
                }
                return .values([.variant(try findProperty(call, interfaceName, name).getter(path, call.caller))])
            }
            Method("GetAll", in: ["interface_name": "s"], out: ["properties": "a{sv}"]) { call in
                let interfaceName = try call.decode(String.self)
                let interface = try find(call, interfaceName)
                return .values([try object?.allProperties(of: interface, for: call.caller) ?? .vardict([:])])
            }
            Method("Set", in: ["interface_name": "s", "property_name": "s", "value": "v"]) { call in
                let (interfaceName, name, value) = try call.decode(String.self, String.self, DBusValue.self)
                let property = try findProperty(call, interfaceName, name)
                guard let setter = property.setter else {
                    throw DBusError.propertyReadOnly("property \(interfaceName).\(name) is read-only")
                }
                guard value.signature == property.signature else {
                    throw DBusError.invalidArgs("property \(interfaceName).\(name) is of type '\(property.signature)', not '\(value.signature)'")
                }
                let before = try? property.getter(path, nil)
                try setter(value, call)
                if before != (try? property.getter(path, nil)) { object?.propertiesChanged([name], on: interfaceName) }
                return call.repliesLater ? .later : .empty
            }
            Signal("PropertiesChanged", ["interface_name": "s", "changed_properties": "a{sv}", "invalidated_properties": "as"])
        }
    }

    /// `reveals`: whether the caller may see an object (the access policy's filter).
    static func objectManager(at path: ObjectPath, tree: @escaping () -> ObjectTree, reveals: @escaping (ObjectPath, MethodCall) -> Bool) -> Interface {
        Interface(objectManager) {
            Method("GetManagedObjects", out: ["objects": "a{oa{sa{sv}}}"]) { call in
                var result: [(key: DBusValue, value: DBusValue)] = []
                for (objectPath, object) in tree().objects.sorted(by: { $0.key < $1.key })
                where objectPath.isDescendant(of: path) && object.isManaged && reveals(objectPath, call) {
                    var interfaces: [(key: DBusValue, value: DBusValue)] = []
                    for interface in object.interfaces {
                        interfaces.append((key: .string(interface.name), value: try object.allProperties(of: interface, for: call.caller)))
                    }
                    result.append((key: .objectPath(objectPath), value: .dictionary(key: "s", value: "a{sv}", interfaces)))
                }
                return .values([.dictionary(key: "o", value: "a{sa{sv}}", result)])
            }
            Signal("InterfacesAdded", ["object_path": "o", "interfaces_and_properties": "a{sa{sv}}"])
            Signal("InterfacesRemoved", ["object_path": "o", "interfaces": "as"])
        }
    }
}
