import CallDirectory
import DBus
import Dispatch
import FoundationEssentials
import Logging
import MonkeyCallAPI
import TelephonyCore

/// Which app opens the links of each scheme: the first app (by app key) that declares an app's
/// own scheme (`monkeycall`) in its URLSchemes claims it; a later app that declares it too does
/// not take it (that is logged), unless the user chooses it (`SetLinkHandler`, `monkeycall links`,
/// or a choice in a link's question). Shared schemes (`tel`, `sip`, `callto`: `CallLink.sharedSchemes`)
/// are held only by the user's choice. Saved in `links.json` of the data folder, written off the
/// service queue.
@TelephonyActor
final class LinkClaims {
    private(set) var handlers: [String: String] = [:]
    private let path: String?
    private let logger: Logger
    private let storage = DispatchQueue(label: "org.monkeycall.links", qos: .utility)

    init(folder: String?, logger: Logger) {
        self.logger = logger
        path = folder.map { $0 + "/links.json" }
        guard let path, let data = FileManager.default.contents(atPath: path) else { return }
        do {
            handlers = try JSONDecoder().decode([String: String].self, from: data)
        } catch {
            logger.error("ignoring unreadable link handlers \(path): \(errorText(error))")
        }
    }

    /// A provider was registered: the schemes it declares that nobody claimed are its app's.
    func claim(_ provider: Provider) {
        var changed = false
        for scheme in Set(provider.configuration.urlSchemes.map { $0.lowercased() }) where !CallLink.sharedSchemes.contains(scheme) {
            switch handlers[scheme] {
            case nil:
                handlers[scheme] = provider.appKey
                changed = true
            case provider.appKey?:
                break
            case let owner?:
                logger.warning("\(provider.appKey) declares the link scheme \(scheme), which \(owner) handles; it keeps it (choose with: monkeycall links \(scheme) APP)")
            }
        }
        if changed { save() }
    }

    /// The user's choice; "" forgets the scheme's handler.
    func choose(_ app: String, for scheme: String) throws {
        let scheme = scheme.lowercased()
        guard !scheme.isEmpty, scheme.utf8.count <= 64, scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || "0123456789+-.".unicodeScalars.contains($0)) }) else {
            throw DBusError.invalidArgs("'\(scheme.prefix(64))' is not a URL scheme")
        }
        guard app.utf8.count <= 255 else { throw DBusError.invalidArgs("an app key is at most 255 bytes") }
        handlers[scheme] = app.isEmpty ? nil : app
        logger.info(app.isEmpty ? "links of \(scheme) go to no app in particular" : "links of \(scheme) go to \(app), as the user chose")
        save()
    }

    private func save() {
        guard let path else { return }
        let handlers = self.handlers, logger = self.logger
        storage.async {
            do {
                try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(handlers).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                logger.error("cannot save link handlers to \(path): \(errorText(error))")
            }
        }
    }

    /// Waits until the handlers handed to the disk are written.
    func settle() async {
        await withCheckedContinuation { continuation in storage.async { continuation.resume() } }
    }
}
