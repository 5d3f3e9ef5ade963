import DBus
import DBusTestSupport
import Foundation
import MonkeyCallAPI
import Testing

/// The edges of D-Bus itself: nesting as deep as the bus allows, messages as
/// large as it allows, properties set to the wrong type, and objects that
/// vanish while calls to them are in flight.
@Suite("Hostile input at the limits of D-Bus")
struct HostileLimitsTests {
    static let invalidArgs = DBusError.Name.invalidArgs

    @Test("variants, arrays and structs nested up to the bus's limit get InvalidArgs or are ignored; deeper never reaches the daemon")
    func deepNesting() async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        // Variants inside RegisterProvider's 'Name', deeper until the bus refuses the message.
        var deepest = 0
        var probe = try daemon.connect()
        for depth in 1...80 {
            let outcome = await daemon.send(probe, Telephony1.rootPath, Telephony1.Manager.interface, "RegisterProvider",
                                            [.vardict(["Name": HostileValues.nestedVariants(depth, around: .string("x"))])])
            if outcome.errorName == Self.invalidArgs && outcome.error?.message.contains("'Name'") == true {
                deepest = depth
                continue
            }
            // Past the limit the bus drops the sender (or libdbus refuses to build the message): the daemon sees nothing.
            #expect(outcome.errorName == DBusError.Name.disconnected || outcome.errorName == DBusError.Name.noMemory
                    || outcome.errorName == Self.invalidArgs && outcome.error?.message.contains("'Name'") != true,
                    "variants nested \(depth) deep: \(outcome)")
            probe = try daemon.connect()
            break
        }
        // The D-Bus specification allows 64 levels of containers in a message, variants included.
        #expect(deepest >= 60, "the daemon answered variants nested up to \(deepest) deep only")
        for depth in [1, 2, deepest / 2, deepest - 1, deepest] {
            let variants = HostileValues.nestedVariants(depth, around: .bool(true))
            let set = await daemon.send(daemon.controller, Telephony1.rootPath, "org.freedesktop.DBus.Properties", "Set",
                                        [.string(Telephony1.Manager.interface), .string("DoNotDisturb"), .variant(variants)])
            #expect(set.errorName == Self.invalidArgs, "DoNotDisturb set to variants nested \(depth) deep: \(set)")
            let ignored = await daemon.send(targets.provider.connection, targets.provider.path, Telephony1.Provider.interface, "ReportCallUpdated",
                                            [.string(targets.call), .vardict(["NoSuchKey": variants])])
            #expect(ignored.values != nil, "an unknown key with variants nested \(depth) deep: \(ignored)")
            // An action's dictionary sits two containers deeper (an array of structs) than RegisterProvider's.
            let shallower = HostileValues.nestedVariants(min(depth, deepest - 2), around: .bool(true))
            let action = await daemon.send(targets.user, Telephony1.rootPath, Telephony1.CallController.interface, "RequestTransaction",
                                           [.array(element: "(sa{sv})", [.structure([.string("answer"), .vardict(["CallUUID": shallower])])])])
            #expect(action.errorName == Self.invalidArgs, "CallUUID as variants nested \(depth) deep: \(action)")
        }
        // 32 arrays and 32 structs: the most one signature may nest.
        for (what, value) in [("arrays", HostileValues.nestedArrays(32, around: .string("x"))), ("structs", HostileValues.nestedStructs(32, around: .string("x")))] {
            let ignored = await daemon.send(targets.provider.connection, targets.provider.path, Telephony1.Provider.interface, "ReportCallUpdated",
                                            [.string(targets.call), .vardict(["NoSuchKey": value])])
            #expect(ignored.values != nil, "an unknown key holding 32 nested \(what): \(ignored)")
            let named = await daemon.send(targets.provider.connection, targets.provider.path, Telephony1.Provider.interface, "ReportCallUpdated",
                                          [.string(targets.call), .vardict(["LocalizedCallerName": value])])
            #expect(named.errorName == Self.invalidArgs, "LocalizedCallerName holding 32 nested \(what): \(named)")
        }
        try await daemon.conclude("deep nesting (deepest variant nesting answered: \(deepest))")
    }

    /// libdbus takes messages of up to 128 MiB, and arrays (an `a{sv}` too) of up to 64 MiB;
    /// a client that sends more is disconnected by the bus before the daemon sees anything.
    static let messageLimit = 128 << 20, arrayLimit = 64 << 20
    /// Room for the header and the other arguments.
    static let margin = 64 << 10

    @Test("strings and arrays up to the bus's limits get proper errors, and none is kept")
    func hugeMessages() async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        var values = HostileValues(seed: 1)
        let manager = Telephony1.Manager.interface, controller = Telephony1.CallController.interface
        let directory = Telephony1.CallDirectory.interface, provider = Telephony1.Provider.interface
        let user = targets.user, app = targets.provider.connection, root = Telephony1.rootPath
        let text = { (size: Int) in DBusValue.string(String(repeating: "7", count: size)) }
        // (what, sent by, to, interface, member, arguments for a size, whether the size is inside an array)
        let cases: [(String, Connection, ObjectPath, String, String, (Int) -> [DBusValue], Bool)] = [
            ("a link", user, root, manager, "OpenURL", { [text($0)] }, false),
            ("a provider name", user, root, manager, "RegisterProvider", { [.vardict(["Name": text($0)])] }, true),
            ("a handle to call", user, root, controller, "StartCall", { [text($0), .vardict(["Provider": .objectPath(targets.provider.path)])] }, false),
            ("DTMF digits", user, root, controller, "PlayDTMF", { [.string(targets.call), text($0), .string("single-tone")] }, false),
            ("a handle to identify", user, root, directory, "Identify", { [text($0)] }, false),
            ("a block list pattern", user, root, directory, "BlockHandle", { [text($0)] }, false),
            ("a directory name", user, root, directory, "SetDirectoryEnabled", { [text($0), .bool(true)] }, false),
            ("a favorite", user, root, Telephony1.Favorites.interface, "Add", { [text($0), .string("generic"), .string("n"), .string("Fuzz0")] }, false),
            ("an incoming handle", app, targets.provider.path, provider, "ReportNewIncomingCall", { [.string(UUID().uuidString), .vardict(["Handle": text($0)])] }, true),
            ("a caller name", app, targets.provider.path, provider, "ReportCallUpdated", { [.string(targets.call), .vardict(["LocalizedCallerName": text($0)])] }, true),
            ("an end reason", app, targets.provider.path, provider, "ReportCallEnded", { [.string(targets.call), text($0), .uint64(0)] }, false),
            ("an identification label", app, targets.update, Telephony1.CallDirectoryUpdate.interface, "AddIdentificationEntries",
             { [.array(element: "x", [.int64(14_085_555_555)]), .array(element: "s", [text($0)])] }, true),
            ("a property's interface name", user, root, "org.freedesktop.DBus.Properties", "GetAll", { [text($0)] }, false),
        ]
        let started = ContinuousClock.now
        // Every case at 1 MiB; at the limits (seconds each), the default run sends two, a long run all.
        let atLimit: Set = FuzzSettings.long ? Set(cases.map(\.0)) : ["a block list pattern", "an incoming handle"]
        var sent = 0
        for (what, connection, path, interface, member, arguments, inArray) in cases {
            for size in [1 << 20] + (atLimit.contains(what) ? [(inArray ? Self.arrayLimit : Self.messageLimit) - Self.margin] : []) {
                let outcome = await daemon.send(connection, path, interface, member, arguments(size))
                sent += 1
                #expect(outcome.errorName.map(ProperErrors.isProper) == true, "\(what) of \(size) bytes: \(outcome)")
                #expect(daemon.daemon.isRunning, "monkeycalld exited on \(what): \(daemon.daemon.output)")
            }
        }
        // Arrays of numbers and bytes: each element is a value to build and to read, so they stop at 4 MiB.
        let icon = await daemon.send(user, root, manager, "RegisterProvider", [.vardict(["Name": .string("Icon"), "IconData": .array(element: "y", values.bytes(4 << 20))])])
        #expect(icon.errorName == Self.invalidArgs, "an icon of 4 MiB: \(icon)")
        let entries = await daemon.send(app, targets.update, Telephony1.CallDirectoryUpdate.interface, "AddBlockingEntries",
                                        [.array(element: "x", (0..<(512 << 10)).map { _ in .int64(values.integer(Int64.self)) })])
        #expect(entries.errorName.map(ProperErrors.isProper) == true, "half a million random blocking entries: \(entries)")
        // A pattern that long is refused, not kept and written to disk.
        let blocked = try await daemon.controller.call(destination: Telephony1.busName, path: root, interface: "org.freedesktop.DBus.Properties",
                                                       member: "Get", [.string(directory), .string("BlockedHandles")])
        #expect(blocked.first?.unwrappedVariant == .array(element: "s", []), "the block list kept a huge pattern")
        try await daemon.conclude("huge messages (\(sent + 2) sent in \(ContinuousClock.now - started), \(atLimit.count) at the limits)")
    }

    @Test("Properties.Set with every wrong type on every writable property is InvalidArgs; read-only and unknown ones say so")
    func propertiesSetWrongTypes() async throws {
        let daemon = try await FuzzedDaemon()
        let targets = try await FuzzTargets(daemon)
        var values = HostileValues(seed: 1)
        var writable = 0
        for (kind, interfaces) in try await targets.interfaces() {
            let path = targets.path(kind), owner = targets.owner(kind)
            func set(_ interface: String, _ name: String, _ value: DBusValue) async -> Outcome {
                await daemon.send(owner, path, "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
            }
            for (interface, shape) in interfaces {
                for (name, property) in shape.properties.sorted(by: { $0.key < $1.key }) {
                    let fitting = values.value(of: Substring(property.type))
                    guard property.access != "read" else {
                        let refused = await set(interface, name, fitting)
                        // A value too big for any call is refused from the message's header, before the property is looked at.
                        let oversized = refused.errorName == DBusError.Name.invalidArgs && "\(refused)".contains("this method takes at most")
                        #expect(refused.errorName == DBusError.Name.propertyReadOnly || oversized, "\(interface).\(name) at \(kind): \(refused)")
                        continue
                    }
                    writable += 1
                    var wrongs = HostileValues.wrongValues(for: property.type)
                    wrongs += [1, 2, 16].map { HostileValues.nestedVariants($0, around: fitting) }
                    for wrong in wrongs {
                        let outcome = await set(interface, name, wrong)
                        #expect(outcome.errorName == Self.invalidArgs, "\(interface).\(name) at \(kind) set to \(wrong): \(outcome)")
                    }
                    // The right type still works, so the refusals above are about the type.
                    let accepted = await set(interface, name, fitting)
                    #expect(accepted.values != nil, "\(interface).\(name) at \(kind) set to \(fitting): \(accepted)")
                }
                if interface.hasPrefix("org.monkeycall.") {
                    let unknown = await set(interface, "NoSuchProperty", .string("x"))
                    #expect(unknown.errorName == DBusError.Name.unknownProperty, "\(interface).NoSuchProperty: \(unknown)")
                }
            }
            let noInterface = await set("org.example.NoSuchInterface", "Name", .string("x"))
            #expect(noInterface.errorName == DBusError.Name.unknownInterface, "\(kind): \(noInterface)")
        }
        #expect(writable >= 4, "only \(writable) writable properties found")
        try await daemon.conclude("Properties.Set (\(writable) writable properties)")
    }

    @Test("calls in flight to call, provider and update objects that vanish meanwhile all get answers; nothing of a gone provider survives")
    func vanishingObjects() async throws {
        let daemon = try await FuzzedDaemon()
        let removed = try await SignalRecorder(daemon.controller, MatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        var random = SplitMix64(seed: 1)
        let rounds = 40
        for round in 0..<rounds {
            let app = try await FuzzProvider(daemon, name: "Vanishing\(round)")
            let calls = [try await app.reportIncoming(), try await app.reportIncoming()]
            guard case .objectPath(let update)? = try await app.call("BeginCallDirectoryUpdate", [.bool(false)]).first else {
                Issue.record("no directory update"); return
            }
            let vanish = random.pick(["end a call", "invalidate", "disconnect", "complete the update", "cancel the update"])!
            let position = Int.random(in: 0..<24, using: &random)
            let plan = (0..<24).map { _ in (Int.random(in: 0..<10, using: &random), random.pick(calls)!) }
            let context = "round \(round), \(vanish) after \(position) calls"
            let outcomes = await withTaskGroup(of: (String, Bool, Outcome).self) { group in
                for (index, (operation, call)) in plan.enumerated() {
                    if index == position {
                        group.addTask {
                            switch vanish {
                            case "end a call": ("vanish", true, await daemon.send(app.connection, app.path, Telephony1.Provider.interface, "ReportCallEnded",
                                                                                  [.string(calls[0]), .string("remote-ended"), .uint64(0)]))
                            case "invalidate": ("vanish", true, await daemon.send(app.connection, app.path, Telephony1.Provider.interface, "Invalidate"))
                            case "disconnect":
                                ("vanish", true, { app.connection.close(); return Outcome.reply([]) }())
                            case "complete the update": ("vanish", true, await daemon.send(app.connection, update, Telephony1.CallDirectoryUpdate.interface, "Complete"))
                            default: ("vanish", true, await daemon.send(app.connection, update, Telephony1.CallDirectoryUpdate.interface, "Cancel"))
                            }
                        }
                    }
                    group.addTask {
                        let callPath = Telephony1.callPath(call)
                        let controller = daemon.controller
                        return switch operation {
                        case 0: ("GetAll on the call", false, await daemon.send(controller, callPath, "org.freedesktop.DBus.Properties", "GetAll", [.string(Telephony1.Call.interface)]))
                        case 1: ("Call.SetMuted", false, await daemon.send(controller, callPath, Telephony1.Call.interface, "SetMuted", [.bool(true)]))
                        case 2: ("Call.Answer", false, await daemon.send(controller, callPath, Telephony1.Call.interface, "Answer"))
                        case 3: ("AnswerCall", false, await daemon.send(controller, Telephony1.rootPath, Telephony1.CallController.interface, "AnswerCall", [.string(call)]))
                        case 4: ("Introspect the call", false, await daemon.send(controller, callPath, "org.freedesktop.DBus.Introspectable", "Introspect"))
                        case 5: ("Calls of the provider", false, await daemon.send(controller, app.path, "org.freedesktop.DBus.Properties", "Get",
                                                                                  [.string(Telephony1.Provider.interface), .string("Calls")]))
                        case 6: ("ReportCallUpdated", true, await daemon.send(app.connection, app.path, Telephony1.Provider.interface, "ReportCallUpdated",
                                                                             [.string(call), .vardict(["LocalizedCallerName": .string("x")])]))
                        case 7: ("ReportNewIncomingCall", true, await daemon.send(app.connection, app.path, Telephony1.Provider.interface, "ReportNewIncomingCall",
                                                                                 [.string(UUID().uuidString), .vardict(["Handle": .string("late")])]))
                        case 8: ("AddBlockingEntries", true, await daemon.send(app.connection, update, Telephony1.CallDirectoryUpdate.interface, "AddBlockingEntries",
                                                                              [.array(element: "x", [.int64(Int64(1000 + round))])]))
                        default: ("GetManagedObjects", false, await daemon.send(controller, Telephony1.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
                        }
                    }
                }
                var outcomes: [(String, Bool, Outcome)] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            for (what, fromApp, outcome) in outcomes {
                guard let name = outcome.errorName else { continue }
                // After its own close, the app's connection refuses to send: no daemon answer to judge.
                if fromApp && vanish == "disconnect" && name == DBusError.Name.disconnected { continue }
                #expect(ProperErrors.isProper(name), "\(context): \(what): \(outcome)")
            }
            if vanish == "invalidate" || vanish == "disconnect" {
                #expect(await removed.next(timeout: .seconds(10), where: { $0.first == .objectPath(app.path) }) != nil, "\(context): provider not removed")
                let survivors = try await Self.managedCalls(daemon).filter { $0.provider == app.path }
                #expect(survivors.isEmpty, "\(context): calls of the gone provider survive: \(survivors.map(\.path))")
            } else {
                app.connection.close()
            }
        }
        try await daemon.conclude("vanishing objects (\(rounds) rounds)")
    }

    /// The calls GetManagedObjects lists, with their providers.
    static func managedCalls(_ daemon: FuzzedDaemon) async throws -> [(path: ObjectPath, provider: ObjectPath?)] {
        let reply = try await daemon.controller.call(destination: Telephony1.busName, path: Telephony1.rootPath,
                                                     interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { return [] }
        return objects.compactMap { entry in
            guard case .objectPath(let path) = entry.key, case .dictionary(_, _, let interfaces) = entry.value,
                  let call = interfaces.first(where: { $0.key == .string(Telephony1.Call.interface) })?.value.vardict else { return nil }
            if case .objectPath(let provider)? = call["Provider"] { return (path, provider) }
            return (path, nil)
        }
    }
}
