/// Where a link goes (`Switchboard.route`).
public enum LinkRoute: Equatable, Sendable {
    /// To this app's newest provider, once the user confirms.
    case app(Provider)
    /// The user chooses among these apps (newest first, one provider each, at most
    /// `LinkRoute.maximumChoices`).
    case choose([Provider])
    /// Nobody can take it; `holder`: the app that handles the scheme and is not running.
    case none(holder: String?)

    public static let maximumChoices = 3
}

extension Switchboard {
    /// Which app a link goes to. `holder`: the app key that holds the link's scheme (the first
    /// app that declared an app's own scheme, or the user's choice). The holder's newest
    /// provider when it runs; else, because a scheme never changes hands without the user,
    /// the one app that can take it (the user confirms it by name) or a choice among several.
    public func route(_ link: CallLink, holder: String?) -> LinkRoute {
        let candidates = linkCandidates(for: link)
        if let holder, let held = candidates.first(where: { $0.appKey == holder }) { return .app(held) }
        switch candidates.count {
        case 0: return .none(holder: holder)
        case 1: return .app(candidates[0])
        default: return .choose(Array(candidates.prefix(LinkRoute.maximumChoices)))
        }
    }

    /// The apps that can take a link, newest first, each by its newest provider: those that
    /// declared its scheme in their URL schemes, and for `tel:` those that take phone numbers.
    public func linkCandidates(for link: CallLink) -> [Provider] {
        var seen: Set<String> = []
        return orderedProviders.reversed().filter { provider in
            let configuration = provider.configuration
            let takes = configuration.urlSchemes.contains { $0.lowercased() == link.scheme }
                || (link.scheme == "tel" && configuration.supportedHandleTypes.contains(.phoneNumber))
            return takes && seen.insert(provider.appKey).inserted
        }
    }
}
