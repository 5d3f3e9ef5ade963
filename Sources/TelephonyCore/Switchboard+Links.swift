extension Switchboard {
    /// The provider a link goes to: the newest that declared the link's scheme
    /// in its URL schemes; for `tel:` without one, the newest that takes phone numbers.
    public func provider(for link: CallLink) -> Provider? {
        let newestFirst = orderedProviders.reversed()
        if let declared = newestFirst.first(where: { $0.configuration.urlSchemes.contains { $0.lowercased() == link.scheme } }) {
            return declared
        }
        guard link.scheme == "tel" else { return nil }
        return newestFirst.first { $0.configuration.supportedHandleTypes.contains(.phoneNumber) }
    }
}
