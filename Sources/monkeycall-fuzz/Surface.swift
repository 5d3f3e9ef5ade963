import DBus
import Foundation
import FuzzSupport
import MonkeyCallAPI

/// The D-Bus surface to fuzz, read from the typed specs (`Telephony1.interfaces`, and the
/// desktop's interfaces the service serves, `Desktop.served`: GNOME Shell's search provider and
/// KRunner's runner), and the Phone app's (`PhoneSurface`, when asked for): every method of
/// every interface, every property (Get, Set, GetAll), and the standard interfaces every object
/// serves. Nothing here lists the API's members by hand.
struct Surface {
    /// The parts of the surface a run may be given (`--surface`): the API but its address book
    /// (`api`), `AddressBook`, GNOME Shell's search provider, KRunner's runner, and the Phone
    /// app's `org.freedesktop.Application` (which needs the app running: not in the default).
    enum Name: String, CaseIterable, Sendable, Comparable {
        case api, addressbook, search, runner, phone

        static func < (lhs: Name, rhs: Name) -> Bool { allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)! }
        /// What a sandboxed app may not use at all: every member answers it AccessDenied.
        var isHostOnly: Bool { self == .addressbook || self == .search || self == .runner }
    }

    /// The daemon's whole surface.
    static let defaultNames: Set<Name> = [.api, .addressbook, .search, .runner]

    enum Operation {
        case method(MemberDescription)
        case property(MemberDescription)
        /// `org.freedesktop.DBus.*` on an object of the API: Introspect, Ping, GetManagedObjects.
        case standard(interface: String, member: String)
    }

    /// Which object serves an API interface: by the interface's last name component.
    enum ObjectKind: String { case root, provider, call, directoryUpdate, search, runner, phone }

    let operations: [(operation: Operation, weight: Int)]
    let methods: [String: MemberDescription]
    let names: Set<Name>
    /// The objects the standard operations aim at: those of the surfaces fuzzed.
    let standardKinds: [ObjectKind]

    init(_ names: Set<Name> = Surface.defaultNames) {
        var operations: [(Operation, Int)] = []
        var methods: [String: MemberDescription] = [:]
        for interface in Telephony1.interfaces + Desktop.served.map(\.interface) + PhoneSurface.interfaces {
            for member in interface.members {
                if member.kind == .method { methods["\(Self.shortName(member.interface)).\(member.name)"] = member }
                guard names.contains(Self.name(of: interface.name)) else { continue }
                switch member.kind {
                case .method:
                    operations.append((.method(member), PhoneSurface.weight(of: member) ?? 3))
                case .property:
                    operations.append((.property(member), 1))
                case .signal:
                    break
                }
            }
        }
        for (interface, member) in [("org.freedesktop.DBus.Introspectable", "Introspect"), ("org.freedesktop.DBus.Peer", "Ping"),
                                    ("org.freedesktop.DBus.Peer", "GetMachineId"), ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")] {
            operations.append((.standard(interface: interface, member: member), 1))
        }
        // A run of some parts only: each part as likely as the others, however many members it has
        // (AddressBook has one method, KRunner's runner six), the standard operations a quarter of one.
        if names != Self.defaultNames {
            var totals: [Name: Int] = [:]
            for (operation, weight) in operations { if let name = Self.name(of: operation) { totals[name, default: 0] += weight } }
            let standard = operations.filter { Self.name(of: $0.0) == nil }.reduce(0) { $0 + $1.1 }
            operations = operations.map { operation, weight in
                let total = Self.name(of: operation).map { totals[$0]! } ?? standard * 4
                return (operation, max(1, weight * 1_000 / total))
            }
        }
        self.operations = operations
        self.methods = methods
        self.names = names
        var kinds: [ObjectKind] = []
        for (kind, surfaces) in [(ObjectKind.root, [Name.api, .addressbook]), (.provider, [.api]), (.call, [.api]), (.directoryUpdate, [.api]),
                                 (.search, [.search]), (.runner, [.runner]), (.phone, [.phone])] where !names.isDisjoint(with: surfaces) {
            kinds.append(kind)
        }
        standardKinds = kinds
    }

    /// The part of the surface a method or property belongs to; nil for the standard operations (any part's objects).
    static func name(of operation: Operation) -> Name? {
        switch operation {
        case .method(let member), .property(let member): name(of: member.interface)
        case .standard: nil
        }
    }

    /// `Provider` for `org.monkeycall.Telephony1.Provider`.
    static func shortName(_ interface: String) -> String { String(interface.split(separator: ".").last ?? "") }

    /// The part of the surface an interface belongs to.
    static func name(of interface: String) -> Name {
        switch interface {
        case Telephony1.AddressBook.interface: .addressbook
        case Desktop.SearchProvider2.interface: .search
        case Desktop.KRunner1.interface: .runner
        case _ where PhoneSurface.interfaces.contains(where: { $0.name == interface }): .phone
        default: .api
        }
    }

    static func objectKind(of interface: String) -> ObjectKind {
        if let served = Desktop.served.first(where: { $0.interface.name == interface }) {
            return served.path == Telephony1.searchPath ? .search : .runner
        }
        if name(of: interface) == .phone { return .phone }
        return switch shortName(interface) {
        case "Provider": .provider
        case "Call": .call
        case "CallDirectoryUpdate": .directoryUpdate
        default: .root
        }
    }

    /// The part of the surface a standard call on an object of `kind` counts for.
    func name(of kind: ObjectKind) -> Name {
        switch kind {
        case .root: names.contains(.api) ? .api : .addressbook
        case .provider, .call, .directoryUpdate: .api
        case .search: .search
        case .runner: .runner
        case .phone: .phone
        }
    }

    /// A method by `Interface.Member`; the fuzzer's lifecycle steps name the methods they drive.
    func method(_ name: String) -> MemberDescription {
        guard let member = methods[name] else { fatalError("the API has no method \(name): the fuzzer's lifecycle steps must follow it") }
        return member
    }
}

/// One call the fuzzer sends, and what its reply means for the pool.
struct FuzzCall: Sendable {
    enum Effect: Sendable {
        case none
        case registered(connection: Int)
        case reportedIncoming(uuid: String, provider: ObjectPath)
        case startedCall(provider: ObjectPath?)
        case endedCall(uuid: String)
        case spentAction(uuid: String)
        case invalidated(provider: ObjectPath)
        case beganUpdate(provider: ObjectPath)
        case closedUpdate(update: ObjectPath)
        case addedFavorite
        case removedFavorite(id: UInt64)
        case listedRecents
        case listedObjects
        /// GNOME Shell's result ids, KRunner's matches, AddressBook's contacts: ids and queries to use again.
        case searchResults
        case runnerMatches
        case contacts
    }

    var connection: Int
    var path: ObjectPath
    var interface: String
    var member: String
    var arguments: [DBusValue]
    /// What the arguments aim at: "own live call", "foreign provider", …
    var note: String
    var effect: Effect = .none
    /// The bus name called: the service, or the Phone app.
    var destination: String = Telephony1.busName
    /// The part of the surface the call counts for.
    var surface: Surface.Name = .api
    /// Errors documented for this call beyond the standard ones and the API's (GLib's NotSupported for Open).
    var documentedErrors: Set<String> = []

    var label: String { "\(Surface.shortName(interface)).\(member)" }

    /// A call a sandboxed app must be refused: a member of AddressBook, GNOME Shell's or KRunner's
    /// interface, or one of their properties through org.freedesktop.DBus.Properties.
    var isHostOnly: Bool {
        if Surface.name(of: interface).isHostOnly { return true }
        guard interface == "org.freedesktop.DBus.Properties", case .string(let named)? = arguments.first else { return false }
        return Surface.name(of: named).isHostOnly
    }
}

/// Makes the calls: picks an operation, a target object and arguments, from the pool of
/// live objects often and from hostile values otherwise.
struct Generator {
    var maker: ValueMaker
    let surface: Surface
    let pool: Pool
    let connections: Int
    let host: Bool
    /// Times only in [an hour ago, now + 59 s] and 0 (see `--times-within-contract`).
    var timesWithinContract = false
    private var snapshot: Pool.Snapshot
    private var made = 0
    /// The Phone app action the call being made names: its parameter follows it.
    private var actionName = ""
    private let weightTotal: Int

    init(seed: UInt64, surface: Surface, pool: Pool, connections: Int, host: Bool) {
        maker = ValueMaker(seed: seed)
        self.surface = surface
        self.pool = pool
        self.connections = connections
        self.host = host
        snapshot = pool.snapshot()
        weightTotal = surface.operations.reduce(0) { $0 + $1.weight }
    }

    private mutating func chance(_ probability: Double) -> Bool { maker.random.chance(probability) }
    private mutating func pick<C: Collection>(_ collection: C) -> C.Element? { maker.random.pick(collection) }

    static func nowMicroseconds() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1_000_000) }

    mutating func next() -> FuzzCall {
        made += 1
        snapshot = pool.snapshot()
        // Own providers and calls, driven: the API's (a run of other surfaces only has none).
        if surface.names.contains(.api), let step = lifecycleStep() { return step }
        var roll = maker.random.int(0...(weightTotal - 1))
        var chosen = surface.operations[0].operation
        for (operation, weight) in surface.operations {
            if roll < weight { chosen = operation; break }
            roll -= weight
        }
        switch chosen {
        case .method(let member): return call(member, good: 0.6)
        case .property(let member): return property(member)
        case .standard(let interface, let member):
            let kind = pick(surface.standardKinds)!
            let (path, connection, note) = target(kind)
            var call = FuzzCall(connection: connection, path: path, interface: interface, member: member, arguments: [], note: note,
                                effect: member == "GetManagedObjects" && kind != .phone ? .listedObjects : .none)
            call.surface = surface.name(of: kind)
            if kind == .phone { call.destination = PhoneApp.appID }
            return call
        }
    }

    // MARK: Lifecycles: own objects made, driven and ended, with extreme times

    /// Keeps the pool alive and drives what it holds: a provider, ringing and outgoing calls,
    /// actions to fulfil (with `Date` extremes), calls to connect and end (at extreme times).
    private mutating func lifecycleStep() -> FuzzCall? {
        let roll = maker.random.int(0...99)
        if snapshot.providers.isEmpty {
            return roll < 50 ? call(surface.method("Manager.RegisterProvider"), good: 0.97) : nil
        }
        switch roll {
        case 0..<5 where snapshot.calls.count < 16:
            return call(surface.method("Provider.ReportNewIncomingCall"), good: 0.95)
        case 5..<8 where snapshot.calls.count < 16:
            return call(surface.method("CallController.StartCall"), good: 0.95)
        case 8..<14 where !snapshot.actions.isEmpty:
            return call(surface.method(chance(0.8) ? "Provider.FulfillAction" : "Provider.FailAction"), good: 0.95)
        case 14..<18 where !snapshot.calls.isEmpty:
            return call(surface.method(pick(["Provider.ReportCallEnded", "Provider.ReportOutgoingCallConnected",
                                             "Provider.ReportOutgoingCallStartedConnecting"])!), good: 0.95)
        case 18..<20 where !snapshot.calls.isEmpty:
            return call(surface.method(pick(["CallController.AnswerCall", "CallController.EndCall", "CallController.SetHeld"])!), good: 0.95)
        case 20 where snapshot.updates.isEmpty:
            return call(surface.method("Provider.BeginCallDirectoryUpdate"), good: 0.95)
        case 21 where snapshot.providers.count < 3:
            return call(surface.method("Manager.RegisterProvider"), good: 0.95)
        default:
            return nil
        }
    }

    // MARK: Methods

    /// A call of `member` on an object that serves it (usually), with arguments that are good
    /// with probability `good` each, else hostile; now and then the wrong arguments altogether.
    mutating func call(_ member: MemberDescription, good: Double) -> FuzzCall {
        let kind = Surface.objectKind(of: member.interface)
        var (path, connection, note) = target(kind, member: member.name)
        var arguments: [DBusValue] = []
        var effect: FuzzCall.Effect = .none
        let provider = snapshot.providers.first { $0.path == path }?.path ?? snapshot.providers.first?.path
        for argument in member.inputs {
            let (value, what) = self.argument(argument, member: member, path: path, good: good)
            arguments.append(value)
            if let what { note += ", \(argument.name): \(what)" }
        }
        // Wrong arguments: missing, extra, or of other types.
        if chance(0.04) {
            switch maker.random.int(0...2) {
            case 0 where !arguments.isEmpty: arguments.removeLast(); note += ", an argument missing"
            case 1: arguments.append(maker.anyValue(depth: 0)); note += ", an extra argument"
            default:
                arguments = member.inputs.map { pick(Hostile.wrongValues(for: $0.signature.rawValue))! }
                note += ", arguments of the wrong types"
            }
        }
        switch (Surface.shortName(member.interface), member.name) {
        case ("Manager", "RegisterProvider"): effect = .registered(connection: connection)
        case ("Provider", "ReportNewIncomingCall"):
            if case .string(let uuid)? = arguments.first { effect = .reportedIncoming(uuid: uuid, provider: path) }
        case ("CallController", "StartCall"): effect = .startedCall(provider: provider)
        case ("Provider", "ReportCallEnded"):
            if case .string(let uuid)? = arguments.first { effect = .endedCall(uuid: uuid) }
        case ("Provider", "FulfillAction"), ("Provider", "FailAction"):
            if case .string(let uuid)? = arguments.first { effect = .spentAction(uuid: uuid) }
        case ("Provider", "Invalidate"): effect = .invalidated(provider: path)
        case ("Provider", "BeginCallDirectoryUpdate"): effect = .beganUpdate(provider: path)
        case ("CallDirectoryUpdate", "Complete"), ("CallDirectoryUpdate", "Cancel"): effect = .closedUpdate(update: path)
        case ("Favorites", "Add"): effect = .addedFavorite
        case ("Favorites", "Remove"):
            if case .uint64(let id)? = arguments.first { effect = .removedFavorite(id: id) }
        case ("Recents", "List"): effect = .listedRecents
        case ("SearchProvider2", "GetInitialResultSet"), ("SearchProvider2", "GetSubsearchResultSet"): effect = .searchResults
        case ("krunner1", "Match"): effect = .runnerMatches
        case ("AddressBook", "Search"): effect = .contacts
        default: break
        }
        // The connection that owns the provider acts for it, mostly.
        if kind == .provider || kind == .directoryUpdate, let owner = snapshot.providers.first(where: { $0.path == path || Telephony1.directoryUpdatePath($0.path) == path }),
           chance(0.9) {
            connection = owner.connection
        }
        var made = FuzzCall(connection: connection, path: path, interface: member.interface, member: member.name, arguments: arguments, note: note, effect: effect)
        made.surface = Surface.name(of: member.interface)
        if kind == .phone {
            made.destination = PhoneApp.appID
            made.documentedErrors = PhoneSurface.documentedErrors(interface: member.interface, member: member.name)
        }
        return made
    }

    /// An object of `kind` to call: own and live mostly, else another app's, a stale one or a made-up path.
    private mutating func target(_ kind: Surface.ObjectKind, member: String = "") -> (ObjectPath, Int, String) {
        let connection = maker.random.int(0...(connections - 1))
        let roll = maker.random.int(0...99)
        switch kind {
        case .root:
            if roll < 92 { return (Telephony1.rootPath, connection, "root") }
        case .provider:
            // Invalidate ends a provider, and registrations are rate-limited: only spare ones.
            let own = member == "Invalidate" && snapshot.providers.count < 3 ? [] : snapshot.providers
            if roll < 75, let provider = pick(own) { return (provider.path, provider.connection, "own provider") }
            if roll < 87, let path = pick(snapshot.foreignPaths.filter { Telephony1.providerID(from: $0) != nil }) {
                return (path, connection, "another app's provider")
            }
            if roll < 94 { return (Telephony1.providerPath(UInt64(maker.random.int(0...Int(snapshot.highestProvider) + 3))), connection, "a provider number") }
        case .call:
            if roll < 70, let call = pick(snapshot.calls) { return (Telephony1.callPath(call.uuid), connection, "own live call \(call.uuid)") }
            if roll < 82, let uuid = pick(snapshot.foreignCalls) { return (Telephony1.callPath(uuid), connection, "another app's call \(uuid)") }
            if roll < 88, let uuid = pick(snapshot.endedCalls) { return (Telephony1.callPath(uuid), connection, "own ended call \(uuid)") }
        case .search:
            if roll < 92 { return (Telephony1.searchPath, connection, "GNOME Shell's search provider") }
        case .runner:
            if roll < 92 { return (Telephony1.runnerPath, connection, "KRunner's runner") }
        case .phone:
            if roll < 92 { return (PhoneApp.objectPath, connection, "the Phone app") }
            if roll < 96 { return (pick(PhoneSurface.otherPaths)!, connection, "another object of the Phone app") }
        case .directoryUpdate:
            if roll < 70, let update = pick(snapshot.updates) {
                let owner = snapshot.providers.first { $0.path == update.provider }?.connection ?? connection
                return (update.update, owner, "own open update")
            }
            if roll < 80, let provider = pick(snapshot.providers) { return (Telephony1.directoryUpdatePath(provider.path), provider.connection, "own provider's update path") }
            if roll < 90, let path = pick(snapshot.foreignPaths.filter { Telephony1.providerID(from: $0) != nil }) {
                return (Telephony1.directoryUpdatePath(path), connection, "another app's update path")
            }
        }
        // Wrong objects: another kind's, another app's, or none at all.
        if chance(0.5), let path = pick(snapshot.foreignPaths) { return (path, connection, "another app's object") }
        return (pick(Hostile.paths)!, connection, "a made-up path")
    }

    // MARK: Arguments, by name and signature

    private mutating func argument(_ argument: NamedArgument, member: MemberDescription, path: ObjectPath, good: Double) -> (DBusValue, String?) {
        let isGood = chance(good)
        let signature = argument.signature.rawValue
        switch (argument.name, signature) {
        case ("call_uuid", "s"), ("group_with", "s"):
            let fresh = member.name == "ReportNewIncomingCall"
            return uuidArgument(fresh: fresh, provider: path, good: isGood, empty: argument.name == "group_with")
        case ("action_uuid", "s"):
            if isGood, let action = pick(snapshot.actions) { return (.string(action.uuid), "pending \(action.kind) action of \(action.call)") }
            if chance(0.4), let spent = pick(snapshot.spentActions) { return (.string(spent), "spent action") }
            return (.string(chance(0.5) ? UUID().uuidString.lowercased() : maker.string()), "unknown action")
        case ("id", "t"):
            let ids = snapshot.favorites + snapshot.recents
            if isGood, let id = pick(ids) { return (.uint64(id), nil) }
            return (.uint64(maker.uint64()), nil)
        case (_, "t"):
            let time = self.time()
            return (.uint64(time.value), time.name)
        case ("reason", "s"):
            return (.string(isGood ? pick(EndReason.allCases.map(\.rawValue))! : maker.string()), nil)
        case ("handle", "s"), ("pattern", "s"):
            return (.string(isGood ? goodHandle() : maker.string()), nil)
        case ("handle_type", "s"):
            return (.string(isGood ? pick(HandleType.allCases.map(\.rawValue))! : maker.string()), nil)
        case ("url", "s"):
            return (.string(isGood ? pick(["fuzz:alice", "fuzz://bob?video=1", "monkeycall:carol", "tel:+14085555555", "tel:911"])! : maker.string()), nil)
        case ("scheme", "s"):
            return (.string(isGood ? pick(["fuzz", "tel", "monkeycall"])! : maker.string()), nil)
        case ("app", "s"), ("provider_name", "s"), ("name", "s"):
            return (.string(isGood ? pick(["Fuzz", "Fuzz host", "org.example.Fuzzer", "Victim", ""])! : maker.string()), nil)
        case ("query", "s"):
            if isGood, chance(0.3), let seen = pick(snapshot.queries) { return (.string(seen), "a name or number the address book gave") }
            return (.string(isGood ? pick(["ada", "Zoë", "+44 20 7946", "020 7946", "fuzz", "7946 0001", "", "a", "grace hop", "0161 496"])! : maker.string()), nil)
        case ("limit", "u"):
            let limits: [UInt32] = isGood ? [0, 1, 5, 50, 1_000] : [1_001, UInt32.max, UInt32.max - 1, maker.integer(UInt32.self)]
            return (.uint32(pick(limits)!), nil)
        case ("terms", "as"), ("previous_results", "as"), ("identifiers", "as"):
            let count = isGood ? maker.random.int(0...4) : pick([0, 1, 65, 257, 300, 1000])!
            let goodTerm = { (generator: inout Generator) -> String in
                argument.name == "terms" ? generator.pick(["ada", "+1", "408", "555", "fuzz", "zoë", "0161", "lovelace", "+44"])! : generator.resultID()
            }
            // Bad: hostile strings, or ids of this provider's form with a field made hostile.
            let badID = argument.name != "terms" && chance(0.5)
            return (.array(element: "s", (0..<count).map { _ in .string(isGood ? goodTerm(&self) : badID ? mutatedResultID() : maker.string()) }), nil)
        case ("identifier", "s"), ("matchId", "s"):
            if isGood { return (.string(resultID()), nil) }
            return chance(0.5) ? (.string(mutatedResultID()), "a result id made hostile") : (.string(maker.string()), nil)
        case ("token", "s"):
            return (.string(isGood ? "fuzz-token-\(maker.random.int(0...999))" : maker.string()), nil)
        // The Phone app's org.freedesktop.Application and org.gtk.Actions.
        case ("action_name", "s"):
            let name = isGood ? pick([PhoneApp.Action.call, PhoneApp.Action.showCall, PhoneApp.Action.search])!
                : chance(0.5) ? pick(["", "app.call", "CALL", "call ", "quit", "about", "show_call", "search\n"])! : maker.string()
            actionName = name
            return (.string(name), nil)
        case ("parameter", "av"):
            return actionParameter(good: isGood)
        case ("platform_data", "a{sv}"):
            return (.vardict(platformData(good: isGood)), nil)
        case ("uris", "as"):
            let count = isGood ? maker.random.int(1...2) : pick([0, 1, 3, 100])!
            return (.array(element: "s", (0..<count).map { _ in .string(isGood ? pick(PhoneSurface.uris)! : maker.string()) }), nil)
        case ("hint", "s"):
            return (.string(isGood ? pick(["", "view", "edit"])! : maker.string()), nil)
        case ("actionId", "s"):
            return (.string(isGood ? pick(["", "app:Fuzz", "app:Fuzz host 1", "app:Victim"])! : maker.string()), nil)
        case ("digits", "s"):
            return (.string(isGood ? pick(["1", "123#*", "0w9p", ""])! : maker.string()), nil)
        case ("type", "s"):
            return (.string(isGood ? pick(DTMFType.allCases.map(\.rawValue))! : maker.string()), nil)
        case ("numbers", "ax"):
            return numbers(good: isGood)
        case ("labels", "as"):
            let count = isGood ? maker.random.int(0...8) : pick([0, 1, 3, 100, 5000])!
            return (.array(element: "s", (0..<count).map { i in .string(isGood ? "Label \(i)" : maker.string()) }), nil)
        case ("actions", "a(sa{sv})"):
            let count = isGood ? maker.random.int(1...2) : pick([0, 1, 3, 65])!
            return (.array(element: "(sa{sv})", (0..<count).map { _ in action(good: isGood) }), nil)
        case (let name, "a{sv}"):
            let keys = OptionKeys.keys(forArgument: name)
            var entries = maker.vardict(keys: keys, depth: 2, good: nil)
            if isGood {
                for key in keys.keys.sorted() where chance(key == "Name" ? 0.97 : key == "Handle" || key == "Date" ? 0.8 : 0.3) {
                    entries[key] = goodOption(key) ?? maker.value(of: Substring(keys[key]!), depth: 2)
                }
                // A good configuration keeps its calls in Recents: the ends are written there.
                if name == "configuration" { entries["IncludesCallsInRecents"] = .bool(true) }
            } else {
                for key in entries.keys where keys[key] != nil && chance(0.5) {
                    entries[key] = maker.entryValue(key: key, type: keys[key], depth: 2, good: { _ in nil })
                }
            }
            return (.vardict(entries), nil)
        case (_, "b"):
            // Settings lean to off: Do Not Disturb on would filter every incoming call.
            return (.bool(chance(0.3)), nil)
        case (_, "u"):
            return (.uint32(isGood ? UInt32(maker.random.int(0...50)) : maker.integer(UInt32.self)), nil)
        default:
            return (maker.value(of: Substring(signature)), nil)
        }
    }

    /// A result id: one the search providers gave this run (half the time, when there are some),
    /// else one of the fixed ones.
    mutating func resultID() -> String {
        if chance(0.5), let seen = pick(snapshot.resultIDs) { return seen }
        return pick(Self.resultIDs)!
    }

    /// A result id of the providers' form (`source:type:app:handle:name:shown:label`, `%`-escaped)
    /// with one field made hostile: a hostile string raw or escaped, broken escapes, a field
    /// missing or one too many, an unknown source or handle type.
    mutating func mutatedResultID() -> String {
        var fields = resultID().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let index = maker.random.int(0...(fields.count - 1))
        switch maker.random.int(0...5) {
        case 0: fields[index] = maker.string()
        case 1: fields[index] = Self.escaped(maker.string())
        case 2: fields[index] = pick(["%", "%G0", "%00", "%2", "%%", "%3A%3A", "%0A", "%E2%80%AE", "%FF%FE", ""])!
        case 3: fields.remove(at: index)
        case 4: fields.insert(pick(["", "x", "%3A"])!, at: index)
        default: fields[pick([0, 1])!] = pick(["", "NUMBER", "contact ", "phone", "sip", maker.string()])!
        }
        return fields.joined(separator: ":")
    }

    /// `%XX` for `%`, `:` and control characters, as the providers escape a field.
    static func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if byte == UInt8(ascii: "%") || byte == UInt8(ascii: ":") || byte < 0x20 || byte == 0x7F {
                bytes += Array(String(format: "%%%02X", byte).utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The parameter of a Phone app action (`av`): one string fitting the action named just before
    /// (a handle, a call's UUID, a query), else none, two, another type, a hostile string or variants nested deep.
    private mutating func actionParameter(good: Bool) -> (DBusValue, String?) {
        if good {
            let value: String
            switch actionName {
            case PhoneApp.Action.showCall:
                value = pick(snapshot.calls.map(\.uuid) + snapshot.foreignCalls).map { chance(0.8) ? $0 : $0.uppercased() } ?? UUID().uuidString.lowercased()
            case PhoneApp.Action.search:
                value = chance(0.3) ? pick(snapshot.queries) ?? "ada" : pick(PhoneSurface.queries)!
            default:
                value = chance(0.7) ? pick(PhoneSurface.handles)! : goodHandle()
            }
            return (.array(element: "v", [.variant(.string(value))]), nil)
        }
        switch maker.random.int(0...9) {
        case 0: return (.array(element: "v", []), "no parameter")
        case 1: return (.array(element: "v", [.variant(.string(maker.string())), .variant(.string(maker.string()))]), "two parameters")
        case 2: return (.array(element: "v", [.variant(pick(Hostile.wrongValues(for: "s"))!)]), "a parameter of another type")
        case 3: return (.array(element: "v", [Hostile.nestedVariants(maker.random.int(2...40), around: .string("+14085550142"))]), "variants nested")
        default: return (.array(element: "v", [.variant(.string(maker.string()))]), "a hostile string")
        }
    }

    /// `platform_data`: an activation token and an X11 startup id (`_TIME` and a time), good or hostile, and other keys.
    private mutating func platformData(good: Bool) -> [String: DBusValue] {
        let keys = [Desktop.Application.activationToken: "s", Desktop.Application.desktopStartupID: "s"]
        var entries = maker.vardict(keys: keys, depth: 2, good: nil)
        if good {
            for key in keys.keys.sorted() where chance(0.5) {
                entries[key] = .string(key == Desktop.Application.desktopStartupID ? "fuzz_TIME\(maker.random.int(0...Int(UInt32.max)))" : "fuzz-\(maker.random.int(0...9999))")
            }
        } else if chance(0.5) {
            let value = pick(["_TIME", "_TIME18446744073709551616", "_TIME-1", "x_TIME4294967295", "_TIME" + String(repeating: "9", count: 400), maker.string()])!
            entries[pick(keys.keys.sorted())!] = chance(0.8) ? .string(value) : pick(Hostile.wrongValues(for: "s"))!
        }
        return entries
    }

    /// Ids of results as the search providers give them: a typed number, a contact, a favorite of
    /// a running app, a Recents entry of an email address.
    static let resultIDs = ["number:phone-number::+14085550142::+1 408 555 0142:", "contact:phone-number::+442079460001:Ada:+44 20 7946 0001:mobile",
                            "favorite:phone-number:Fuzz:+14085550100:Fuzz Friend:+14085550100:", "recent:email-address:Victim:fuzz@example.org::fuzz@example.org:"]

    /// A call UUID: own and live (of this provider when there is one), another app's, an ended
    /// one, a fresh one (for new calls), or not a UUID; in any letter case.
    private mutating func uuidArgument(fresh: Bool, provider: ObjectPath, good: Bool, empty: Bool) -> (DBusValue, String) {
        func cased(_ uuid: String, _ rng: inout SplitMix64) -> String { rng.chance(0.1) ? uuid.uppercased() : uuid }
        if empty && chance(0.2) { return (.string(""), "empty") }
        if fresh && good { return (.string(cased(UUID().uuidString.lowercased(), &maker.random)), "new call") }
        if good || chance(0.5) {
            let mine = snapshot.calls.filter { $0.provider == provider }
            if let call = pick(mine.isEmpty ? snapshot.calls : mine) {
                return (.string(cased(call.uuid, &maker.random)), "own live \(call.outgoing ? "outgoing" : "incoming") call")
            }
        }
        switch maker.random.int(0...3) {
        case 0: if let uuid = pick(snapshot.foreignCalls) { return (.string(uuid), "another app's call") }
        case 1: if let uuid = pick(snapshot.endedCalls) { return (.string(uuid), "own ended call") }
        case 2: return (.string(UUID().uuidString.lowercased()), "unknown UUID")
        default: break
        }
        return (.string(maker.string()), "not a call's UUID")
    }

    /// A `t` time: "now" (0), around now, the edges of [call start, now + 60 s], or extremes.
    private mutating func time() -> (value: UInt64, name: String) {
        let now = Self.nowMicroseconds()
        let choices: [((UInt64, String), Int)] = [
            ((0, "0"), 20), ((now, "now"), 8), ((now - 3_600_000_000, "an hour ago"), 4), ((now + 59_000_000, "now+59s"), 4),
            ((now + 61_000_000, "now+61s"), 4), ((now + 365 * 86_400_000_000, "now+1y"), 3), ((1, "1"), 4),
            ((UInt64(Int64.max) - 1, "2^63-2"), 5), ((UInt64(Int64.max), "2^63-1"), 8), ((UInt64(Int64.max) + 1, "2^63"), 8),
            ((UInt64.max - 1, "2^64-2"), 5), ((UInt64.max, "2^64-1"), 12), ((maker.random.next(), "random"), 8),
        ]
        let (value, name) = maker.random.pick(weighted: timesWithinContract ? Array(choices.prefix(4)) : choices)
        return (value, "t \(name)")
    }

    private mutating func goodHandle() -> String {
        switch maker.random.int(0...3) {
        case 0: return "+1408555\(String(format: "%04d", maker.random.int(0...9999)))"
        case 1: return "fuzz\(maker.random.int(0...999))@example.org"
        default: return "fuzz-caller-\(maker.random.int(0...9999))"
        }
    }

    private mutating func numbers(good: Bool) -> (DBusValue, String?) {
        if good {
            var number = Int64(maker.random.int(1...1_000_000_000))
            let list: [DBusValue] = (0..<maker.random.int(0...20)).map { _ in
                number += Int64(maker.random.int(1...1000))
                return .int64(number)
            }
            return (.array(element: "x", list), "ascending")
        }
        switch maker.random.int(0...9) {
        case 0: // Big and ascending: what a real block list sends, to the limit.
            let start = Int64(maker.random.int(1...1_000_000))
            return (.array(element: "x", (0..<20_000).map { .int64(start + Int64($0)) }), "20,000 ascending")
        case 1..<4: return (.array(element: "x", Hostile.int64s.sorted().map { .int64($0) }), "extremes ascending")
        default: return (.array(element: "x", (0..<maker.random.int(0...8)).map { _ in .int64(maker.int64()) }), "random")
        }
    }

    /// One `(sa{sv})` action: a known kind with its keys (good values mostly), or anything.
    private mutating func action(good: Bool) -> DBusValue {
        let kinds = OptionKeys.actions.keys.sorted()
        let kind = good || chance(0.7) ? pick(kinds)! : maker.string()
        let keys = OptionKeys.actions[kind] ?? [:]
        var args = maker.vardict(keys: keys, depth: 4, good: nil)
        if good {
            for key in keys.keys.sorted() where key == "CallUUID" || chance(0.5) { args[key] = goodOption(key, kind: kind) }
        }
        return .structure([.string(kind), .vardict(args)])
    }

    /// A good value for an option key: own objects, valid names, now-ish times (and extremes).
    private mutating func goodOption(_ key: String, kind: String? = nil) -> DBusValue? {
        switch key {
        case "Name": return .string(host ? "Fuzz host \(maker.random.int(0...9))" : "Fuzz")
        case "Handle": return .string(goodHandle())
        case "HandleType": return .string(pick(HandleType.allCases.map(\.rawValue))!)
        case "LocalizedCallerName": return .string(pick(["Alice", "Bob <b>", "Carol \u{202E}x"])!)
        case "CallUUID":
            if kind == "start" || (kind == nil && chance(0.5)) { return .string(UUID().uuidString.lowercased()) }
            return pick(snapshot.calls).map { .string($0.uuid) } ?? .string(UUID().uuidString.lowercased())
        case "GroupWith": return pick(snapshot.calls).map { .string($0.uuid) } ?? .string("")
        case "Provider": return pick(snapshot.providers).map { .objectPath($0.path) }
        case "Digits": return .string("12#")
        case "Type": return .string(DTMFType.singleTone.rawValue)
        case "Date": return .uint64(time().value)
        case "URLSchemes": return .array(element: "s", [.string("fuzz")])
        case "SupportedHandleTypes": return .array(element: "s", HandleType.allCases.map(\.rawValue).map { .string($0) })
        case "IconData": return .array(element: "y", (chance(0.8) ? Hostile.tinyPNG : Hostile.hugePNGHeader).map { .byte($0) })
        case "IconName", "RingtoneSound": return .string("phone-incoming-call")
        case "DesktopEntry": return .string("org.example.Fuzzer")
        case "MaximumCallGroups", "MaximumCallsPerCallGroup": return .uint32(UInt32(maker.random.int(1...5)))
        case "IncludesCallsInRecents": return .bool(true)
        default: return nil
        }
    }

    // MARK: Properties

    /// Get, Set (of the right type, mostly, writable or not) or GetAll, on the property's object.
    mutating func property(_ member: MemberDescription) -> FuzzCall {
        var call = propertyCall(member)
        call.surface = Surface.name(of: member.interface)
        if Surface.objectKind(of: member.interface) == .phone { call.destination = PhoneApp.appID }
        return call
    }

    private mutating func propertyCall(_ member: MemberDescription) -> FuzzCall {
        let kind = Surface.objectKind(of: member.interface)
        let (path, connection, note) = target(kind)
        let properties = "org.freedesktop.DBus.Properties"
        let interfaceName: DBusValue = .string(chance(0.95) ? member.interface : maker.string())
        let name: DBusValue = .string(chance(0.95) ? member.name : maker.string())
        switch maker.random.int(0...9) {
        case 0..<5:
            return FuzzCall(connection: connection, path: path, interface: properties, member: "Get", arguments: [interfaceName, name], note: "\(member.name), \(note)")
        case 5..<9:
            let type = member.type?.rawValue ?? "s"
            var value: DBusValue
            switch maker.random.int(0...9) {
            case 0..<5 where type == "b": value = .bool(chance(0.15))
            case 0..<7: value = maker.value(of: Substring(type), depth: 1)
            case 7..<9: value = pick(Hostile.wrongValues(for: type))!
            default: value = Hostile.nestedVariants(maker.random.int(1...40), around: .bool(false))
            }
            return FuzzCall(connection: connection, path: path, interface: properties, member: "Set", arguments: [interfaceName, name, .variant(value)],
                            note: "\(member.name) (\(member.access == .readwrite ? "writable" : "read-only")), \(note)")
        default:
            return FuzzCall(connection: connection, path: path, interface: properties, member: "GetAll", arguments: [interfaceName], note: note)
        }
    }
}
