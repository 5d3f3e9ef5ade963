import TelephonyCore

/// The service's screening as the switchboard asks for it: who the caller is to the user, and
/// whether their call rings. Each report looks the caller up once (a favorite, a contact, Recents
/// only when silencing unknown callers needs it) for both the name and the verdict.
extension ServiceContext: @TelephonyActor CallScreening {
    func screen(_ handle: Handle, supplied name: String, now: UInt64) -> ScreenedCaller {
        let favorite = favoriteNames[handle.value]
        // Contacts count as known callers, as on iOS; an address book still being read only knows fewer.
        let contact = contactName(of: handle)
        let listing = screening.listing(of: handle.value)
        let verdict = screening.screen(listing, isFavorite: favorite != nil, isContact: contact != nil,
                                       isKnown: history?.knows(handle: handle.value) == true, now: now)
        return ScreenedCaller(displayName: Self.displayName(favorite: favorite, contact: contact, supplied: name, listing: listing), verdict: verdict)
    }

    /// What `Identify` answers for a handle: the name a call from it would show (as if its app
    /// supplied none) and whether it is blocked.
    func identify(_ handle: Handle) -> (name: String, blocked: Bool) {
        let listing = screening.listing(of: handle.value)
        return (Self.displayName(favorite: favoriteNames[handle.value], contact: contactName(of: handle), supplied: "", listing: listing), listing.blocked)
    }

    /// The user's own names first (a favorite, else a contact), else the name the app supplied, else
    /// an enabled call directory's label.
    func displayName(of handle: Handle, supplied name: String) -> String {
        // The directories only when no other name is known.
        if let favorite = favoriteNames[handle.value] { return favorite }
        if let contact = contactName(of: handle) { return contact }
        return name.isEmpty ? screening.listing(of: handle.value).label ?? "" : name
    }

    private static func displayName(favorite: String?, contact: String?, supplied name: String, listing: Screening.Listing) -> String {
        favorite ?? contact ?? (name.isEmpty ? listing.label ?? "" : name)
    }
}
