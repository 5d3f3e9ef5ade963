import TelephonyCore

/// The service's screening as the switchboard asks for it: who the caller is to the user, and
/// whether their call rings. Each report looks the caller up once (a favorite, a contact, Recents
/// only when silencing unknown callers needs it) for both the name and the verdict.
extension ServiceContext: @TelephonyActor CallScreening {
    func screen(_ handle: Handle, supplied name: String, now: UInt64) -> ScreenedCaller {
        let favorite = favoriteNames[handle.value]
        // Contacts count as known callers, as on iOS; an address book still being read only knows fewer.
        let contact = contactName(of: handle)
        let verdict = screening.screen(handle.value, isFavorite: favorite != nil, isContact: contact != nil,
                                       isKnown: history?.knows(handle: handle.value) == true, now: now)
        return ScreenedCaller(displayName: favorite ?? contact ?? displayName(of: handle, supplied: name, userNames: false), verdict: verdict)
    }

    /// The user's own names first (a favorite, else a contact), else the name the app supplied, else
    /// an enabled call directory's label.
    func displayName(of handle: Handle, supplied name: String) -> String {
        displayName(of: handle, supplied: name, userNames: true)
    }

    private func displayName(of handle: Handle, supplied name: String, userNames: Bool) -> String {
        if userNames {
            if let favorite = favoriteNames[handle.value] { return favorite }
            if let contact = contactName(of: handle) { return contact }
        }
        if !name.isEmpty { return name }
        return screening.label(for: handle.value) ?? ""
    }
}
