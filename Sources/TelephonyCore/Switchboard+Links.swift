extension Switchboard {
    /// The provider a link goes to: the newest of the app `handler` (the app key that claimed the
    /// scheme) that declared the link's scheme in its URL schemes; when that app is not running,
    /// the newest that declared it; for `tel:` without one, the newest that takes phone numbers.
    public func provider(for link: CallLink, handledBy handler: String? = nil) -> Provider? {
        let newestFirst = orderedProviders.reversed()
        let declaring = newestFirst.filter { $0.configuration.urlSchemes.contains { $0.lowercased() == link.scheme } }
        if let handler, let chosen = declaring.first(where: { $0.appKey == handler }) {
            return chosen
        }
        if let declared = declaring.first {
            return declared
        }
        guard link.scheme == "tel" else { return nil }
        return newestFirst.first { $0.configuration.supportedHandleTypes.contains(.phoneNumber) }
    }
}
