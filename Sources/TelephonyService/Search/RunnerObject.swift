import DBus
import Localization
import MonkeyCallAPI
import PeopleSearch

/// `org.kde.krunner1` (API DBus2) at `/Runner`: KRunner finds what GNOME Shell's search finds
/// (`PeopleFinder`), with an action per app when several can call. Match ids carry what they
/// show and call, as the GNOME provider's do. Host callers only.
@TelephonyActor
final class RunnerObject: ServiceObject {
    private let finder: PeopleFinder
    /// Plasma 6's token for the window `Run` opens, given just before it.
    private var activationToken: String?

    /// KRunner asks from the second letter on.
    nonisolated static let minimumLetters: Int32 = 2
    /// An action's id: this, then the app key.
    nonisolated static let actionPrefix = "app:"

    init(finder: PeopleFinder) {
        self.finder = finder
    }

    func interface() -> Interface {
        typealias API = Desktop.KRunner1
        return Interface(API.interface) {
            method(API.teardown) { _, _ in }
            method(API.config) { _, _ in [API.ConfigKey.minLetterCount: .int32(Self.minimumLetters)] }
            method(API.actions) { runner, _ in
                runner.finder.callingApps().map {
                    API.RemoteAction(id: Self.actionPrefix + $0.appKey, text: SearchResultText.callWith($0), iconName: "call-start-symbolic")
                }
            }
            methodReplyingLater(API.match) { runner, reply, query in
                guard query.utf8.count <= SearchProviderObject.maximumTermBytes else {
                    throw DBusError.invalidArgs("query: at most \(SearchProviderObject.maximumTermBytes) bytes, got \(query.utf8.count)")
                }
                let search = SearchQuery(query, numbering: runner.finder.numbering)
                // Which app calls each match, as the apps are now; the matches made on the search's queue.
                // KRunner matches again at each key: a newer Match from its connection replaces this one.
                let routing = runner.finder.routing()
                try runner.finder.search(for: SearchQueue.Requester(reply.call, replacing: "KRunner's Match"),
                                         { indexes in Self.matches(indexes.find(search), routing) }, answer: { reply.send($0 ?? []) })
            }
            method(API.run) { runner, call, matchID, actionID in
                guard let hit = SearchHit(id: matchID) else {
                    throw DBusError.invalidArgs("'\(matchID.prefix(64))' is not a match of this runner")
                }
                var app: String?
                if !actionID.isEmpty {
                    guard actionID.hasPrefix(Self.actionPrefix) else { throw DBusError.invalidArgs("unknown action '\(actionID.prefix(64))'") }
                    app = String(actionID.dropFirst(Self.actionPrefix.count))
                }
                let token = runner.activationToken
                runner.activationToken = nil
                try runner.finder.call(hit, through: app, from: call.sender,
                                       platformData: token.map { [Desktop.Application.activationToken: .string($0)] } ?? [:])
            }
            method(API.setActivationToken) { runner, _, token in
                guard token.utf8.count <= 1_024 else { throw DBusError.invalidArgs("token: at most 1,024 bytes, got \(token.utf8.count)") }
                runner.activationToken = token.isEmpty ? nil : token
            }
        }
    }

    /// KRunner's matches, best first: an exact one (the whole name or number) as such, the others
    /// as possible; an action per app when several can call it.
    private nonisolated static func matches(_ hits: [SearchHit], _ routing: Routing) -> [Desktop.KRunner1.RemoteMatch] {
        typealias API = Desktop.KRunner1
        return hits.enumerated().map { rank, hit in
            let route = routing.route(hit)
            let able = routing.apps.filter { $0.calls(hit.handleType) }
            let actions = able.count > 1 ? able.map { Self.actionPrefix + $0.appKey } : []
            let text = SearchResultText.title(hit)
            return API.RemoteMatch(id: hit.id, text: text, iconName: SearchResultText.iconName(hit), type: hit.isExact ? .exact : .possible,
                                   relevance: max(0.1, 1 - 0.1 * Double(rank)),
                                   properties: [API.PropertyKey.subtext: .string(SearchResultText.description(hit, route)),
                                                API.PropertyKey.actions: actions.dbusValue])
        }
    }
}
