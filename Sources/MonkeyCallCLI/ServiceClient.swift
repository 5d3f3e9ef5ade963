import ArgumentParser
import DBus
import FoundationEssentials
import Glibc
import Localization
import MonkeyCallAPI
import MonkeyCallClient

/// The CLI's view of the service, over the typed client the Phone app uses too
/// (`TelephonyClient`): what the CLI adds is its names for providers and calls, and the service's
/// errors as the user's (`CLIError`).
struct ServiceClient {
    let client: TelephonyClient
    var connection: Connection { client.connection }

    init(_ options: BusOptions) async throws {
        do {
            client = try TelephonyClient(address: options.address)
        } catch let error as DBusError {
            throw CLIError(tr("cannot reach the session bus: %1$s", error.message))
        }
        // Not running is fine when the bus can start it (D-Bus activation after scripts/install).
        var available = try await client.isRunning()
        if !available { available = try await client.isActivatable() }
        guard available else {
            throw CLIError(tr("the MonkeyCall service is not running on this bus (nobody owns %1$s); start it with scripts/run or monkeycalld", Telephony1.busName))
        }
    }

    typealias CallInfo = CallSnapshot

    struct ProviderInfo {
        let path: ObjectPath
        let name: String
        let configuration: [String: DBusValue]
        /// How the CLI names it: its Name, told apart from others of the same name by its desktop
        /// entry (`Name (app.id)`) or else its number (`Name #2`).
        let label: String

        static func label(_ path: ObjectPath, _ name: String, _ configuration: [String: DBusValue],
                          among all: [(ObjectPath, String, [String: DBusValue])]) -> String {
            let namesakes = all.filter { $0.1 == name }
            guard namesakes.count > 1 else { return name }
            func entry(_ configuration: [String: DBusValue]) -> String {
                configuration[Telephony1.Key.desktopEntry].flatMap { try? String(dbusValue: $0.unwrappedVariant) } ?? ""
            }
            let own = entry(configuration)
            if !own.isEmpty && namesakes.filter({ entry($0.2) == own }).count == 1 { return "\(name) (\(own))" }
            return "\(name) #\(Telephony1.providerID(from: path).map(String.init) ?? path.rawValue)"
        }

        static func list(_ providers: [ProviderInfo]) -> String {
            providers.map { Output.clean($0.label) }.joined(separator: ", ")
        }
    }

    /// Objects below the root: (path, interface → properties).
    func managedObjects() async throws -> [(ObjectPath, [String: [String: DBusValue]])] {
        try await userFacing { try await client.managedObjects() }
    }

    /// The calls there are now, oldest first.
    func calls() async throws -> [CallInfo] {
        try await userFacing { try await client.calls() }
    }

    func providers() async throws -> [ProviderInfo] {
        let found = try await userFacing { try await client.providers() }.map { ($0.path, $0.name, $0.configuration) }
        return found.map { path, name, configuration in
            ProviderInfo(path: path, name: name, configuration: configuration, label: ProviderInfo.label(path, name, configuration, among: found))
        }
    }

    /// The provider `--provider` names: by its label (`Name`, `Name (app.id)`, `Name #2`), else by a
    /// name only one provider has. Never one of several silently.
    func resolveProvider(_ given: String) async throws -> ProviderInfo {
        let providers = try await providers()
        if let match = providers.first(where: { $0.label == given }) { return match }
        let named = providers.filter { $0.name == given }
        switch named.count {
        case 1: return named[0]
        case 0:
            throw CLIError(tr("no provider named '%1$s'; registered: %2$s", Output.clean(given), providers.isEmpty ? tr("none") : ProviderInfo.list(providers)))
        default:
            throw CLIError(trn("%1$d provider is named '%2$s'; say which one with --provider: %3$s", "%1$d providers are named '%2$s'; say which one with --provider: %3$s",
                               named.count, Output.clean(given), ProviderInfo.list(named)))
        }
    }

    /// The Name of the app `given` names: a running provider (by name or label), or an app Recents,
    /// the favorites or the call directories know. A name the service has never seen is refused, so
    /// that a typo does not make a favorite that can never ring or a directory for nobody.
    func knownAppName(_ given: String) async throws -> String {
        let running = try await providers()
        if let match = running.first(where: { $0.label == given }) ?? running.first(where: { $0.name == given }) { return match.name }
        let recorded = (try? await call(Telephony1.Recents.list, 10_000, 0)) ?? []
        let favorites = (try? await call(Telephony1.Favorites.list)) ?? []
        let directories = (try? await call(Telephony1.CallDirectory.listDirectories)) ?? []
        let known = Set((recorded + favorites).compactMap { entry -> String? in
            if case .string(let name)? = entry[Telephony1.Key.providerName]?.unwrappedVariant { name } else { nil }
        } + directories.map(\.app))
        guard known.contains(given) else {
            let names = Set(running.map(\.name)).union(known).sorted().map(Output.clean)
            throw CLIError(tr("no app named '%1$s' is running or known from Recents, the favorites or the call directories; apps: %2$s",
                              Output.clean(given), names.isEmpty ? tr("none") : names.joined(separator: tr(", "))))
        }
        return given
    }

    /// The call the user means: the given UUID, or the only call (that fits `filter`).
    func resolveCall(_ uuid: String?, purpose: String, filter: (CallInfo) -> Bool = { _ in true }) async throws -> String {
        if let uuid { return uuid }
        return try Self.onlyCall(of: try await calls().filter(filter), purpose: purpose)
    }

    /// The one call of `candidates`; else an error that says there is none, or lists them.
    static func onlyCall(of candidates: [CallInfo], purpose: String) throws -> String {
        switch candidates.count {
        case 1: return candidates[0].uuid
        // TRANSLATORS: %1$s is the command (answer, hold, mute…): keep it as it is.
        case 0: throw CLIError(tr("there is no call to %1$s", purpose))
        default:
            let lines = candidates.map { call in
                "  " + [call.uuid, call.caller, call.string(Telephony1.Call.providerName)].map(Output.clean).joined(separator: "  ")
            }
            // TRANSLATORS: %2$s is the command (answer, hold, mute…): keep it as it is.
            throw CLIError(trn("there is %1$d call to %2$s; name one:", "there are %1$d calls to %2$s; name one:", candidates.count, purpose)
                           + "\n" + lines.joined(separator: "\n"))
        }
    }

    /// Calls a method of the API (on the root object unless told otherwise) and returns its declared outputs.
    @discardableResult
    func call<each I: DBusRepresentable, each O: DBusRepresentable>(
        _ spec: MethodSpec<Args<repeat each I>, Args<repeat each O>>, at path: ObjectPath = Telephony1.rootPath, _ arguments: repeat each I
    ) async throws -> (repeat each O) {
        try await userFacing { try await client.call(spec, at: path, repeat each arguments) }
    }

    /// Reads a property of the API (of the root object unless told otherwise).
    func get<T: DBusRepresentable>(_ spec: PropertySpec<T>, at path: ObjectPath = Telephony1.rootPath) async throws -> T {
        try await userFacing { try await client.get(spec, at: path) }
    }

    /// Writes a property of the API (of the root object unless told otherwise).
    func set<T: DBusRepresentable>(_ spec: PropertySpec<T>, _ value: T, at path: ObjectPath = Telephony1.rootPath) async throws {
        try await userFacing { try await client.set(spec, value, at: path) }
    }

    /// Every property of one of the API's interfaces (of the root object unless told otherwise).
    func allProperties(of interface: String, at path: ObjectPath = Telephony1.rootPath) async throws -> [String: DBusValue] {
        try await userFacing { try await client.allProperties(of: interface, at: path) }
    }

    /// The service's refusals as the user reads them.
    private func userFacing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw CLIError(error)
        }
    }
}

extension CallSnapshot {
    /// A string property of the call; "" when absent.
    func string(_ property: PropertySpec<String>) -> String { self[property] ?? "" }
    /// The caller's name; "" when there is none or it only repeats the handle.
    var name: String { self.callerName == self.handle ? "" : self.callerName }
    /// The handle, and the caller's name after it when there is one.
    var caller: String { name.isEmpty ? self.handle : "\(self.handle) (\(name))" }
}

extension [String: DBusValue] {
    /// A declared property's value in a dictionary of properties (`GetAll`, `GetManagedObjects`,
    /// `PropertiesChanged`); nil when absent or of another type.
    subscript<T: DBusRepresentable>(_ property: PropertySpec<T>) -> T? {
        self[property.name].flatMap { try? T(dbusValue: $0) }
    }
}

/// A message for the user; the process exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    let message: String
    /// The service's D-Bus error name, when the service refused.
    let name: String?

    init(_ message: String) {
        self.message = message
        name = nil
    }

    /// The service's error in plain words: its message, and the error's short name.
    init(_ error: DBusError) {
        message = Output.clean(error.message)
        name = error.name
    }

    var description: String {
        guard let name else { return message }
        let shortName = name.split(separator: ".").last.map(String.init) ?? name
        return "\(message.isEmpty ? shortName : message) (\(shortName))"
    }
}
