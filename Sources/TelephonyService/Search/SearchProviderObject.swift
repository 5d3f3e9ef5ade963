import DBus
import MonkeyCallAPI
import PeopleSearch

/// `org.gnome.Shell.SearchProvider2` at `/Search`: GNOME Shell's overview finds favorites,
/// contacts and Recents by name or number, and a typed number as itself, and calls the one the
/// user picks (`PeopleFinder`). Result ids carry what they show and call: nothing is kept
/// between the shell's calls. Host callers only (`SandboxGrants` reaches no such path).
@TelephonyActor
final class SearchProviderObject: ServiceObject {
    private let finder: PeopleFinder

    /// Bounds of what the shell sends: more than a person types, or than the shell shows.
    static let maximumTerms = 64
    static let maximumTermBytes = 1_024
    static let maximumIdentifiers = 256
    static let maximumIdentifierBytes = 8_192

    init(finder: PeopleFinder) {
        self.finder = finder
    }

    func interface() -> Interface {
        typealias API = Desktop.SearchProvider2
        return Interface(API.interface) {
            // The shell searches again at each key and drops the answer to the last search: a newer
            // search from its connection replaces the one still waiting or running (answered empty).
            methodReplyingLater(API.getInitialResultSet) { provider, reply, terms in
                try provider.results(for: terms, reply)
            }
            methodReplyingLater(API.getSubsearchResultSet) { provider, reply, previous, terms in
                try Self.check(identifiers: previous, "previous_results")
                // A fresh search: it costs what a filter of the previous results would, and sees what changed since.
                try provider.results(for: terms, reply)
            }
            method(API.getResultMetas) { provider, _, identifiers in
                try Self.check(identifiers: identifiers, "identifiers")
                let apps = provider.finder.callingApps()
                return try identifiers.map { id in
                    let hit = try Self.hit(id)
                    return [
                        "id": .string(id),
                        "name": .string(SearchResultText.title(hit)),
                        "description": .string(SearchResultText.description(hit, provider.finder.route(hit, apps: apps))),
                        "icon": Self.themedIcon(SearchResultText.iconName(hit)),
                        "clipboardText": .string(SearchResultText.shown(hit)),
                    ]
                }
            }
            method(API.activateResult) { provider, call, id, terms, timestamp in
                try Self.check(terms: terms)
                try provider.finder.call(try Self.hit(id), from: call.sender, platformData: Self.platformData(timestamp))
            }
            method(API.launchSearch) { provider, _, terms, timestamp in
                try Self.check(terms: terms)
                provider.finder.askPhone(PhoneApp.Action.search, SearchText.clean(terms.joined(separator: " ")), platformData: Self.platformData(timestamp))
            }
        }
    }

    private func results(for terms: [String], _ reply: Reply<[String]>) throws {
        try Self.check(terms: terms)
        let query = SearchQuery(terms: terms, numbering: finder.numbering)
        // Even an empty one goes in turn: it replaces the search before it.
        try finder.search(for: SearchQueue.Requester(reply.call, replacing: "GNOME Shell's search"), { indexes in indexes.find(query).map(\.id) },
                          answer: { reply.send($0 ?? []) })
    }

    static func check(terms: [String]) throws {
        guard terms.count <= maximumTerms else { throw DBusError.invalidArgs("terms: at most \(maximumTerms), got \(terms.count)") }
        let bytes = terms.reduce(0) { $0 + $1.utf8.count }
        guard bytes <= maximumTermBytes else { throw DBusError.invalidArgs("terms: at most \(maximumTermBytes) bytes in all, got \(bytes)") }
    }

    static func check(identifiers: [String], _ name: String) throws {
        guard identifiers.count <= maximumIdentifiers else {
            throw DBusError.invalidArgs("\(name): at most \(maximumIdentifiers), got \(identifiers.count)")
        }
        if let long = identifiers.first(where: { $0.utf8.count > maximumIdentifierBytes }) {
            throw DBusError.invalidArgs("\(name): an id of \(long.utf8.count) bytes; at most \(maximumIdentifierBytes)")
        }
    }

    /// The result an id names; InvalidArgs for one this provider never gave.
    static func hit(_ id: String) throws -> SearchHit {
        guard let hit = SearchHit(id: id) else { throw DBusError.invalidArgs("'\(id.prefix(64))' is not a result of this search provider") }
        return hit
    }

    /// For the Phone app's window, when it opens: the time of the user's click (X11's startup id),
    /// so that the window may take the focus.
    static func platformData(_ timestamp: UInt32) -> [String: DBusValue] {
        timestamp == 0 ? [:] : [Desktop.Application.desktopStartupID: .string("_TIME\(timestamp)")]
    }

    /// A themed icon as `g_icon_serialize` writes one, which the shell's `Gio.icon_deserialize` reads.
    static func themedIcon(_ name: String) -> DBusValue {
        .structure([.string("themed"), .variant([name, name.replacing("-symbolic", with: "")].dbusValue)])
    }
}
