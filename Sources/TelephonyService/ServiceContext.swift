import AddressBook
import DBus
import Logging
import MonkeyCallAPI
import TelephonyCore

/// What the service's objects share: the connection (whose queue is where all telephony state
/// lives), the switchboard, screening, Recents and Favorites, the options and the log. Each
/// object keeps its own state besides; this holds none of its own.
@TelephonyActor
final class ServiceContext {
    let connection: Connection
    /// The objects the service serves on `connection`, behind its access policy.
    let objects: ObjectServer
    let options: ServiceOptions
    let switchboard: Switchboard
    /// Who rings: block list, directories, Do Not Disturb.
    let screening: Screening
    /// Recents and Favorites; nil when the database could not be opened (see `historyProblem`).
    let history: HistoryStore?
    let historyProblem: String?
    let logger: Logger
    /// Which app opens each link scheme.
    let linkClaims: LinkClaims
    /// The user's contacts (GNOME's address books, vCard folders); nil without one. Read from any
    /// thread through immutable snapshots: a lookup never waits on indexing or EDS.
    let addressBook: AddressBook?

    init(connection: Connection, options: ServiceOptions, switchboard: Switchboard, screening: Screening,
         history: HistoryStore?, historyProblem: String?, addressBook: AddressBook?, logger: Logger) {
        self.connection = connection
        self.objects = ObjectServer(connection: connection)
        self.options = options
        self.switchboard = switchboard
        self.screening = screening
        self.history = history
        self.historyProblem = historyProblem
        self.addressBook = addressBook
        self.logger = logger
        linkClaims = LinkClaims(folder: options.dataDirectory, logger: logger)
    }

    /// Favorite names by handle, kept in memory: caller names are read on every call change.
    var favoriteNames: [String: String] { history?.favoriteNames ?? [:] }

    /// The contact in the user's address book with this number, as far as it has been read; nil for
    /// an email address or a number no contact has.
    func contactName(of handle: Handle) -> String? {
        guard let addressBook, handle.type != .emailAddress else { return nil }
        return addressBook.name(forHandle: handle.value)
    }

    /// The name the app that owns a call reads back when it is sandboxed: only what it supplied or
    /// its own directory gave, never the user's names (favorites, contacts) or another app's
    /// directory (which it could otherwise read out by reporting a call from any number).
    func callerNameForOwningApp(of call: Call) -> String {
        if !call.callerName.isEmpty { return call.callerName }
        return screening.label(for: call.handle.value, inDirectoryOf: call.appKey) ?? ""
    }

    /// Emits `PropertiesChanged` on the root object.
    func rootChanged(_ properties: [any PropertyName]) {
        objects.exportedObject(at: Telephony1.rootPath)?.propertiesChanged(properties)
    }

    /// Applies a change to the Do Not Disturb inputs and announces a new source.
    func changeDoNotDisturb(_ change: () throws -> Void) rethrows {
        let before = screening.doNotDisturbSource
        try change()
        let after = screening.doNotDisturbSource
        guard after != before else { return }
        logger.info("Do Not Disturb: \(after == .none ? "off" : "on, from \(after.rawValue)")")
        rootChanged([Telephony1.Manager.doNotDisturbSource])
    }

    /// Changes the user's settings at once and answers once they are saved: with nil, or with
    /// `SettingsUnavailable` when they could not be (the change undone, and announced so).
    func changeSettings(_ change: (inout ScreeningSettings) throws -> Void, answer: @escaping @Sendable @TelephonyActor (DBusError?) -> Void) rethrows {
        try changeDoNotDisturb {
            try screening.update(change) { [weak self] failure in
                guard let self, let failure else { return answer(nil) }
                if failure.undone {
                    typealias Manager = Telephony1.Manager
                    rootChanged([Manager.doNotDisturb, Manager.doNotDisturbAllowFavorites, Manager.doNotDisturbAllowContacts,
                                 Manager.doNotDisturbAllowRepeatedCalls,
                                 Manager.silenceUnknownCallers, Manager.pausesMediaDuringCalls, Manager.doNotDisturbSource,
                                 Telephony1.CallDirectory.blockedHandles])
                }
                answer(APIError.settingsUnavailable(failure.message))
            }
        }
    }
}

extension MethodCall {
    /// For a property setter: `Properties.Set` answers when this is called (nil: done).
    func answerLater() -> @Sendable (DBusError?) -> Void {
        replyLater()
        return { error in if let error { self.fail(error) } else { self.reply() } }
    }
}

