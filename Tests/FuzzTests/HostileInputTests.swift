import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// Every method of every interface the running daemon serves (from its own
/// introspection, so new methods are fuzzed without a change here), called
/// with what a broken or hostile client might send.
@Suite("Hostile input to the running monkeycalld")
struct HostileInputTests {
    static let invalidArgs = DBusError.Name.invalidArgs

    /// Argument lists that do not fit `types`: missing, one too many, each argument of another type, swapped.
    static func wrongArguments(for types: [String], _ values: inout HostileValues) -> [[DBusValue]] {
        let fitting = types.map { values.value(of: Substring($0)) }
        var lists: [[DBusValue]] = [[], Array(fitting.dropLast()), fitting + [.string("one too many")], Array(fitting.reversed())]
        for (index, type) in types.enumerated() {
            for wrong in HostileValues.wrongValues(for: type) {
                var list = fitting
                list[index] = wrong
                lists.append(list)
            }
        }
        if types.isEmpty { lists += HostileValues.wrongValues(for: "").map { [$0] } }
        let right = types.joined()
        return lists.filter { $0.map(\.signature.rawValue).joined() != right }
    }

    @Test("every method with a wrong signature gets InvalidArgs; unknown members and interfaces their own errors")
    func wrongSignatures() async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        var values = HostileValues(seed: 1)
        for (kind, interfaces) in try await targets.interfaces() {
            let path = targets.path(kind), owner = targets.owner(kind)
            for (interface, shape) in interfaces {
                for (member, method) in shape.methods.sorted(by: { $0.key < $1.key }) {
                    for arguments in Self.wrongArguments(for: method.in, &values) {
                        let outcome = await daemon.send(owner, path, interface, member, arguments)
                        let what = "\(interface).\(member)(\(Self.describe(arguments))) at \(kind)"
                        if interface == "org.freedesktop.DBus.Peer" {
                            // libdbus answers Peer itself, whatever the arguments.
                            #expect(outcome.errorName.map(ProperErrors.isProper) ?? true, "\(what): \(outcome)")
                        } else {
                            #expect(outcome.errorName == Self.invalidArgs, "\(what): \(outcome)")
                        }
                    }
                }
                let unknown = await daemon.send(owner, path, interface, "NoSuchMember", [.string("x")])
                #expect(unknown.errorName == DBusError.Name.unknownMethod, "\(interface).NoSuchMember: \(unknown)")
            }
            let noInterface = await daemon.send(owner, path, "org.example.NoSuchInterface", "Ping")
            #expect(noInterface.errorName == DBusError.Name.unknownInterface, "\(kind): \(noInterface)")
        }
        let noObject = await daemon.send(daemon.controller, Telephony1.rootPath.appending("Nowhere"), Telephony1.Manager.interface, "OpenURL", [.string("x")])
        #expect(noObject.errorName == DBusError.Name.unknownObject)
        try await daemon.conclude("wrong signatures")
    }

    @Test("every method with hostile values of its own types: a reply or a proper error, never a crash or a hang",
          arguments: FuzzSettings.seeds)
    func hostileValues(seed: UInt64) async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        var values = HostileValues(seed: seed)
        let ownedInterfaces: Set = [Telephony1.Provider.interface, Telephony1.CallDirectoryUpdate.interface]
        for (kind, interfaces) in try await targets.interfaces() {
            for (interface, shape) in interfaces {
                for (member, method) in shape.methods.sorted(by: { $0.key < $1.key }) {
                    // Fresh objects: the last method may have ended the call, the update or the provider.
                    try await targets.renew()
                    for _ in 0..<FuzzSettings.inputsPerMethod {
                        let arguments = method.in.map { values.value(of: Substring($0)) }
                        let fromStranger = values.maker.random.chance(0.1)
                        let outcome = await daemon.send(fromStranger ? targets.stranger : targets.owner(kind), targets.path(kind), interface, member, arguments)
                        let what = "MONKEYCALL_FUZZ_SEED=\(seed): \(interface).\(member)(\(Self.describe(arguments))) at \(kind)\(fromStranger ? " from a stranger" : "")"
                        if let name = outcome.errorName {
                            #expect(ProperErrors.isProper(name), "\(what): \(outcome)")
                        }
                        if fromStranger && ownedInterfaces.contains(interface) {
                            #expect([DBusError.Name.accessDenied, DBusError.Name.unknownObject].contains(outcome.errorName), "\(what): \(outcome)")
                        }
                    }
                }
                try await daemon.expectAlive("MONKEYCALL_FUZZ_SEED=\(seed), \(interface) at \(kind)")
            }
        }
        try await daemon.conclude("hostile values, MONKEYCALL_FUZZ_SEED=\(seed)")
    }

    @Test("every option key the API defines, given a value of another type: InvalidArgs naming the key")
    func wrongOptionTypes() async throws {
        let contract = try String(contentsOf: FuzzTargets.contractURL, encoding: .utf8)
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        var values = HostileValues(seed: 1)
        let live = targets.call
        /// A dictionary with every key at a valid value of its type.
        func valid(_ keys: [String: String], _ overrides: [String: DBusValue] = [:]) -> [String: DBusValue] {
            var dict: [String: DBusValue] = [:]
            for (key, type) in keys {
                dict[key] = switch type {
                case "s": .string(key.hasSuffix("UUID") || key == "GroupWith" ? live : key == "HandleType" ? "generic" : key == "Type" ? "single-tone" : "x")
                case "o": .objectPath(targets.provider.path)
                case "b": .bool(false)
                case "u": .uint32(1)
                case "t": .uint64(0)
                default: .array(element: Signature(stringLiteral: String(type.dropFirst())), [])
                }
            }
            return dict.merging(overrides) { $1 }
        }
        typealias Send = ([String: DBusValue]) async -> Outcome
        let provider = Telephony1.Provider.interface
        func toProvider(_ member: String, _ first: DBusValue) -> Send {
            { dict in await daemon.send(targets.provider.connection, targets.provider.path, provider, member, [first, .vardict(dict)]) }
        }
        func toRoot(_ interface: String, _ member: String, _ arguments: [DBusValue], _ wrap: @escaping ([String: DBusValue]) -> DBusValue) -> Send {
            { dict in await daemon.send(targets.user, Telephony1.rootPath, interface, member, arguments + [wrap(dict)]) }
        }
        // (what, its keys, how to send a dictionary of them)
        var cases: [(String, [String: String], Send)] = [
            ("RegisterProvider configuration", OptionKeys.configuration, toRoot(Telephony1.Manager.interface, "RegisterProvider", []) { .vardict($0) }),
            ("ReportNewIncomingCall update", OptionKeys.update, toProvider("ReportNewIncomingCall", .string(UUID().uuidString))),
            ("ReportCallUpdated update", OptionKeys.update, toProvider("ReportCallUpdated", .string(live))),
            ("FulfillAction info", OptionKeys.actionInfo, toProvider("FulfillAction", .string(UUID().uuidString))),
            ("FailAction info", OptionKeys.actionInfo, toProvider("FailAction", .string(UUID().uuidString))),
            ("StartCall options", OptionKeys.startOptions, toRoot(Telephony1.CallController.interface, "StartCall", [.string("bob")]) { .vardict($0) }),
        ]
        for (kind, keys) in OptionKeys.actions.sorted(by: { $0.key < $1.key }) {
            cases.append(("\(kind) action", keys, toRoot(Telephony1.CallController.interface, "RequestTransaction", []) { dict in
                .array(element: "(sa{sv})", [.structure([.string(kind), .vardict(dict)])])
            }))
        }
        for (what, keys, send) in cases {
            for (key, type) in keys.sorted(by: { $0.key < $1.key }) {
                #expect(contract.contains("\(key) \(type)"), "\(what) key '\(key)' of type '\(type)' is not in the contract")
                var wrongs = HostileValues.wrongValues(for: type)
                wrongs.append(HostileValues.nestedVariants(2, around: values.value(of: Substring(type))))
                for wrong in wrongs {
                    let outcome = await send(valid(keys, [key: wrong]))
                    // An array longer than any argument takes is refused as it is read, before its key is known.
                    let named = outcome.error?.message.contains("'\(key)'") == true
                        || outcome.error?.message.contains("an array of more than \(Telephony1.maximumArrayElements) elements") == true
                    #expect(outcome.errorName == Self.invalidArgs && named, "\(what) key '\(key)' = \(wrong): \(outcome)")
                }
            }
        }
        try await daemon.conclude("wrong option types")
    }

    @Test("malformed UUIDs in every UUID argument are InvalidArgs; well-formed unknown ones are not")
    func malformedUUIDs() async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        let wellFormed = ["00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", UUID().uuidString, UUID().uuidString.lowercased()]
        let malformed = HostileValues.uuidLike.filter { UUID(uuidString: $0) == nil || $0.utf8.count != 36 }
        /// Benign values for the other arguments, by name, so that only the UUID is wrong.
        func benign(_ name: String, _ type: String) -> DBusValue {
            switch (name, type) {
            case ("reason", _): .string("remote-ended")
            case ("type", _): .string("single-tone")
            case ("group_with", _): .string("")
            case (_, "s"): .string("1")
            case (_, "b"): .bool(false)
            case (_, "t"): .uint64(0)
            default: .vardict([:])
            }
        }
        var checked = 0
        for (kind, interfaces) in try await targets.interfaces() {
            for (interface, shape) in interfaces {
                for (member, method) in shape.methods.sorted(by: { $0.key < $1.key }) {
                    for (index, name) in method.inNames.enumerated() where name.hasSuffix("uuid") || name == "group_with" {
                        checked += 1
                        // An empty group_with means "leave the group".
                        for (uuid, isMalformed) in malformed.map({ ($0, true) }) + wellFormed.map({ ($0, false) }) where !(uuid.isEmpty && name == "group_with") {
                            try await targets.renew()
                            var arguments = zip(method.inNames, method.in).map { benign($0, $1) }
                            if index > 0 { arguments[0] = .string(targets.call) }
                            arguments[index] = .string(uuid)
                            let outcome = await daemon.send(targets.owner(kind), targets.path(kind), interface, member, arguments)
                            let what = "\(interface).\(member) \(name) '\(uuid)'"
                            if isMalformed {
                                #expect(outcome.errorName == Self.invalidArgs && outcome.error?.message.contains("UUID") == true, "\(what): \(outcome)")
                            } else {
                                #expect(outcome.errorName != Self.invalidArgs && outcome.errorName.map(ProperErrors.isProper) ?? true, "\(what): \(outcome)")
                            }
                        }
                    }
                }
            }
        }
        // The UUIDs inside RequestTransaction's actions.
        for kind in OptionKeys.actions.keys.sorted() {
            for uuid in malformed {
                // An empty GroupWith means "leave the group".
                for key in ["CallUUID"] + (kind == "set-group" && !uuid.isEmpty ? ["GroupWith"] : []) {
                    var args: [String: DBusValue] = ["CallUUID": .string(targets.call), "Handle": .string("bob"), "OnHold": .bool(true), "Muted": .bool(true),
                                                     "GroupWith": .string(""), "Digits": .string("1")]
                    args[key] = .string(uuid)
                    let outcome = await daemon.send(targets.user, Telephony1.rootPath, Telephony1.CallController.interface, "RequestTransaction",
                                                    [.array(element: "(sa{sv})", [.structure([.string(kind), .vardict(args)])])])
                    #expect(outcome.errorName == Self.invalidArgs, "\(kind) action \(key) '\(uuid)': \(outcome)")
                }
            }
        }
        #expect(checked >= 10, "only \(checked) UUID arguments found in the introspection")
        try await daemon.conclude("malformed UUIDs (\(checked) UUID arguments)")
    }

    static func describe(_ arguments: [DBusValue]) -> String {
        let text = arguments.map(\.description).joined(separator: ", ")
        return text.count > 300 ? text.prefix(300) + "… (\(text.count) characters)" : text
    }
}
